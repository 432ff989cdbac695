"""Temporal workflows, activities and worker. Workflows order activities; activities wrap plain functions."""
