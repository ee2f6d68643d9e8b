"""Price readers: providers' price files and tables to Price records."""
