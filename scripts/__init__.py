"""Developers' tools (not product commands): the bench and its letterbox generator."""
