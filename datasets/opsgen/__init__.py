"""Seeded generator for the ragkit course corpus (see ../generate.py)."""
