"""Offer lists: providers read from SkyPilot's catalog CSVs, one small declaration each."""
