"""``run_bootstrap``'s mode selection and key generator rules, without a JVM: which
selectors and regex settings give FULL_RECORD for every source partition (the only mode
hudilite bootstraps), and the refusals naming METADATA_ONLY."""

from __future__ import annotations

import importlib

import pytest

from hudilite import config as cfg
from hudilite.procedures.registry import ProcedureArgumentError, ProcedureContext

imp = importlib.import_module("hudilite.procedures.parquet_import")
CTX = ProcedureContext(None, None, "default", {}, "run_bootstrap")  # type: ignore[arg-type]
FOLDERS = ["region=eu", "region=us"]


def check(selector: str, **options: str) -> None:
    imp._check_selector(CTX, selector, cfg.Options(options), FOLDERS)


def test_full_record_selectors_pass() -> None:
    check(imp.FULL_RECORD_SELECTOR)
    # Regex: matching partitions get regex.mode, the others the other mode.
    check(imp.REGEX_SELECTOR, **{cfg.BOOTSTRAP_REGEX_MODE.name: "FULL_RECORD"})
    check(
        imp.REGEX_SELECTOR,
        **{cfg.BOOTSTRAP_REGEX.name: "nowhere", cfg.BOOTSTRAP_REGEX_MODE.name: "METADATA_ONLY"},
    )


@pytest.mark.parametrize(
    ("selector", "options", "message"),
    [
        (imp.METADATA_ONLY_SELECTOR, {}, "METADATA_ONLY bootstrap"),
        # Hudi's regex default (.*, METADATA_ONLY) selects METADATA_ONLY everywhere.
        (imp.REGEX_SELECTOR, {}, "selects METADATA_ONLY for partition(s) 'region=eu', 'region=us'"),
        (
            imp.REGEX_SELECTOR,
            {cfg.BOOTSTRAP_REGEX.name: "region=us", cfg.BOOTSTRAP_REGEX_MODE.name: "FULL_RECORD"},
            "selects METADATA_ONLY for partition(s) 'region=eu';",
        ),
        (imp.REGEX_SELECTOR, {cfg.BOOTSTRAP_REGEX.name: "("}, "invalid hoodie.bootstrap"),
        ("com.acme.Selector", {}, "unknown selector_class 'com.acme.Selector'"),
    ],
)
def test_metadata_only_and_unknown_selectors_are_refused(
    selector: str, options: dict[str, str], message: str
) -> None:
    with pytest.raises(
        ProcedureArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        check(selector, **options)


def test_key_generator_option() -> None:
    # SimpleKeyGenerator without partition fields: inferred (Hudi's NonpartitionedKeyGenerator).
    assert imp._keygen_options(imp.SIMPLE_KEYGEN, []) == {}
    assert imp._keygen_options(imp.SIMPLE_KEYGEN, ["p"]) == {
        cfg.KEYGEN_CLASS.name: imp.SIMPLE_KEYGEN
    }
    assert imp._keygen_options("complex", ["p", "q"]) == {cfg.KEYGEN_TYPE.name: "COMPLEX"}
