"""Many sessions: a batch on every core, the fleet run on the local pool or Ray,
sessions read from folders, globs and URIs.

Imports: ``design``, ``sessions``, ``cache`` and the public names of the engine,
the bill and the reports.
"""
