"""Python warnings point at the user's line, not inside hudilite (issue 27.9)."""

from __future__ import annotations

import sys
import warnings

from hudilite import config as cfg
from hudilite.errors import OptionWarning, warn_at_caller


def test_option_warnings_point_at_the_callers_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        cfg.check_options({"hoodie.datasource.write.recordkey.feild": "id"})
    assert [w.category for w in caught] == [OptionWarning]
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)


def test_warn_at_caller_skips_every_hudilite_frame() -> None:
    # Raised one frame deep or several (check_options -> warn_at_caller): the frame
    # reported is this module's, the first outside the package.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        warn_at_caller("direct", UserWarning)
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
