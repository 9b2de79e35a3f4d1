"""Configuration: parameter declarations (each parameter once), units, YAML with file and
line, devices, links and models, scenarios."""
