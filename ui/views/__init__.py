"""What a page draws of one analysis: the step and its block stack, block text and diffs,
the charts and the step marked on them, the measured panel, a live request as its step.

Imports: the library's public names, ``ui.html``, ``ui.keys``; never ``ui.state`` (a view
is given what it draws) or ``ui.frame``.
"""
