"""Diagnose a stalled optimization effort from its experiment log."""
