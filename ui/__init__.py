"""Shared Streamlit helpers of the inspector: pages only call the library and these, then draw."""
