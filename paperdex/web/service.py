"""Moved to :mod:`paperdex.service` (the MCP server and the CLI use it too, not only the web).

This name is the same module object, not a copy, so ``paperdex.web.service.X = ...`` (a test's
monkeypatch) still changes what the app calls.
"""

import sys

from paperdex import service as _service

sys.modules[__name__] = _service
