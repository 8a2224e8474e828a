"""Persistent buffers for kernel launchers."""
