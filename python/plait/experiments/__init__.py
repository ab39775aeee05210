"""Experiments that reproduce the papers' tables and figures."""
