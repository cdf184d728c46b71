"""Widgets of the letterbox app."""
