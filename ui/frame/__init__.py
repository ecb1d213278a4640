"""The page frame: set-up and navigation, the sidebar (session, layout, provider, upload),
and the panels that read the sidebar's selection (the bill, the recommendation).

Imports: the library's public names, ``ui.html``, ``ui.keys``, ``ui.state``, ``ui.views``.
"""
