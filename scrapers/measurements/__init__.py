"""Sources of expected and measured bandwidth: health checks, topology files, benchmark runs."""
