"""Configuration: parameter declarations, units, YAML with locations, devices, scenarios."""
