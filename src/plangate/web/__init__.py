"""The run viewer: ``plangate serve``, a local web page over the runs database.

=================  ==========================================================================
``app.py``         the Starlette app: routes, each page and its JSON twin, errors in one place
``pages.py``       what a page shows, as the dict its template draws and its twin returns:
                   the shared pieces, the runs list, the checks, the stamps pages poll
``run_page.py``    the run page: conversation, Plan panel at a version, Version list, reply
``compare.py``     two plan versions compared, and the run's code changes
``queries.py``     the runs store opened read-only, and the reads it has no method for
``diffs.py``       diffs as rows: two plan versions (difflib), or a run's ``git diff``
``changes.py``     the run's code changes, read from its repository without writing
``reply.py``       the reply box: the runs engine records a reply and starts the next turn
``templates/``     Jinja2 pages; ``static/`` the stylesheet and the script (no network)
=================  ==========================================================================
"""
