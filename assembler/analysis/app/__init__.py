"""What only the app needs: uploads read and recognised, the history folded for the
step view, line diffs, chart downsampling and the Learn page's walkthrough.

Imports: ``design``, ``sessions``, ``cache`` and the engine's public names.
"""
