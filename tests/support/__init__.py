"""Shared helpers for Hearth's tests."""
