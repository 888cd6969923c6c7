"""File formats: scenario JSON, COS 418 topologies/events/snapshots, ShiViz logs."""
