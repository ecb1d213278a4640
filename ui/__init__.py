"""The app's Streamlit helpers: pages only call the library and these, then draw.

Three parts over two leaf modules, imports running one way (import-linter checks it):

- ``ui.html``, ``ui.keys``: escaping and the page's style; the arrow-key stepper.
- ``ui.state``: what a browser session holds and what the server keeps for it (uploads,
  parsed sessions and analyses cached by content, layouts, the time and memory budgets).
- ``ui.views``: what a page draws of one analysis (the step, its blocks, charts, the
  measured panel, a live request); they read no session state.
- ``ui.frame``: the page frame (set-up, navigation, the sidebar) and the panels that read
  the sidebar's selection (the bill, the recommendation).
"""
