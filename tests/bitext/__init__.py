"""Tests for the OPUS and ParaNMT readers, language id and pair filters."""
