"""What a browser session holds and what the server keeps for it: the upload and its
summary, sessions and analyses cached by content with their owners, layouts, and the time
and memory budgets every piece of work runs under.

Imports: the library's public names, ``ui.html``; never ``ui.views`` or ``ui.frame``.
"""
