"""Screens of the letterbox app: help and the writing screens."""
