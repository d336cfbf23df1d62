"""test/api: a skipped fact-sheet check is said loudly at the end of the run.

`pytest -q` shows a skip as one "s"; when the shared WIRE-API.md cannot be
found (see wire_shared.py), the table-versus-fact-sheet check is skipped,
and this prints why in the terminal summary, whatever the -r options.
"""


def pytest_terminal_summary(terminalreporter):
    skipped = terminalreporter.stats.get("skipped", [])
    for rep in skipped:
        if "test_table_in_sync_with_wire_doc" not in rep.nodeid:
            continue
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        terminalreporter.write_sep("!", "NOT CHECKED: wire_table.tsv against WIRE-API.md", red=True)
        terminalreporter.write_line(reason)
        terminalreporter.write_line("(set CSI_PROXY_SHARED=<shared folder>, or "
                                    "CSI_PROXY_SHARED_REQUIRED=1 to make this a failure)")
