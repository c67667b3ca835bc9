"""The settings objects (``doclens/core/settings.py``) and the ``Signature`` object (issue 40):
every option checked once, with an error naming it; keywords and the object give the same
scorer; frozen; pickled into an engine unchanged; signatures rendered byte for byte as before,
read back field for field."""

import dataclasses
import functools
import inspect
import pickle

import pytest

from doclens import DocLens, EndpointSettings, ModelSettings, ScoringSettings, Signature
from doclens.core.errors import ConfigurationError
from doclens.evaluators import load_evaluator, load_extractor
from doclens.evaluators.rules.overlap import OverlapEvaluator
from doclens.scoring.build import settings_signature
from doclens.version import __version__

#: one value each option refuses (the option's name must be in the error)
BAD_SCORING = {"task": "summaries", "uncited": "borrow", "max_citations": 0, "on_unparsed": "ignore",
               "question_statements": "words", "uncited_outputs": "na", "premise_scope": "page",
               "section_fallback": "nowhere", "source_units": "pages", "metrics": "source_support", "chunk_size": 0,
               "review_below": 1.5}
BAD_ENDPOINT = {"model": 3, "base_url": 5, "api_key_env": "", "azure_endpoint": 1, "azure_deployment": 2,
                "azure_api_version": 3, "local_only": "yes", "concurrency": 0, "rpm": 0, "tpm": -1, "timeout": 0,
                "max_retries": -1, "max_consecutive_failures": -1, "deadline": "soon", "max_retry_after": -1,
                "backoff_base": -1, "backoff_max": float("inf"), "seed": 1.5, "temperature": float("nan"),
                "max_tokens": 0, "json_response": "no", "price_table": 7}
BAD_MODEL = {"model": 1, "device": 2, "dtype": "int8", "batch_size": 0, "max_batch_tokens": -5, "max_length": 4,
             "window_overlap": 1.0, "padding_tolerance": 1.5, "runtime": 3}


@pytest.mark.parametrize("cls, bad", [(ScoringSettings, BAD_SCORING), (EndpointSettings, BAD_ENDPOINT),
                                      (ModelSettings, BAD_MODEL)], ids=["scoring", "endpoint", "model"])
def test_every_option_is_checked_with_an_error_naming_it(cls, bad):
    assert sorted(bad) == sorted(cls.names())  # a new option needs its bad value here
    for name, value in bad.items():
        with pytest.raises(ConfigurationError, match=name if name != "azure_api_version" else "azure_"):
            cls(**{name: value})
    cls()  # the defaults are valid


def test_combinations_the_settings_refuse_and_unknown_names():
    with pytest.raises(ConfigurationError, match="section_fallback='section'.*premise_scope='section'"):
        ScoringSettings(section_fallback="section")
    assert ScoringSettings(premise_scope="section", section_fallback="section").section_fallback == "section"
    with pytest.raises(ConfigurationError, match="not both"):
        EndpointSettings(base_url="http://127.0.0.1/v1", azure_endpoint="https://x.openai.azure.com")
    with pytest.raises(ConfigurationError, match="azure_deployment / azure_api_version need azure_endpoint"):
        EndpointSettings(azure_deployment="d")
    with pytest.raises(ConfigurationError, match=r"unknown option\(s\) 'uncitted' for ScoringSettings"):
        ScoringSettings.from_kwargs(uncitted="inherit")
    with pytest.raises(ConfigurationError, match="unknown option"):
        ScoringSettings().replace(bogus=1)
    with pytest.raises(ConfigurationError, match="uncited"):
        ScoringSettings().replace(uncited="x")  # a copy is checked again


def test_keywords_read_once_none_is_the_default_and_frozen():
    settings = ScoringSettings.from_kwargs(question_statements=None, metrics="doclens, source_support", task="")
    assert settings.question_statements == "whole" and settings.metrics == ("doclens", "source_support")
    assert settings.task is None
    assert EndpointSettings.from_kwargs(seed=None).seed is None  # an option whose None is a value keeps it
    assert EndpointSettings.from_kwargs(timeout=None).timeout == 60.0
    assert EndpointSettings(deadline="1h30m").deadline_s == 5400.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.uncited = "inherit"  # type: ignore[misc]


def test_an_unknown_metric_family_is_refused_by_the_settings_naming_it_and_the_known_ones():
    with pytest.raises(ConfigurationError, match=r"metrics: unknown metric family 'bogus'.*doclens, source_support"):
        ScoringSettings(metrics=("doclens", "bogus"))
    with pytest.raises(ConfigurationError, match="'bogus'"):
        ScoringSettings.from_kwargs(metrics="doclens,bogus")
    assert ScoringSettings(metrics="doclens, source_support").metrics == ("doclens", "source_support")


@pytest.mark.parametrize("base, name", [(ScoringSettings(max_citations=3), "max_citations"),
                                        (ScoringSettings(chunk_size=4), "chunk_size"),
                                        (EndpointSettings(seed=7), "seed"), (ModelSettings(batch_size=2), "batch_size")],
                         ids=["max_citations", "chunk_size", "seed", "batch_size"])
def test_from_kwargs_and_replace_read_none_alike_as_not_given(base, name):
    """The docs' one rule (``_Settings.from_kwargs``, ``DocLens(settings=…, **options)``): over
    settings already made, ``None`` leaves an option as it is, in both."""
    assert type(base).from_kwargs(base, **{name: None}) is base
    assert base.replace(**{name: None}) is base


def test_an_option_is_set_to_none_itself_with_dataclasses_replace_checked_again():
    assert dataclasses.replace(ScoringSettings(max_citations=3), max_citations=None).max_citations is None
    with pytest.raises(ConfigurationError, match="chunk_size"):
        dataclasses.replace(ScoringSettings(), chunk_size=None)


def test_doclens_takes_the_settings_or_its_keywords_and_keeps_them_frozen():
    judge = OverlapEvaluator()
    options = {"uncited": "inherit", "max_citations": 2, "premise_scope": "section", "source_units": "lines"}
    settings = ScoringSettings(**options)
    by_keywords, by_object = DocLens(judge, **options), DocLens(judge, settings=settings)
    assert by_keywords.settings == settings and by_object.settings is settings
    assert DocLens(judge, settings=settings, uncited="zero").settings == settings.replace(uncited="zero")
    assert DocLens(judge, settings=settings, task=None).settings is settings  # None: not given
    assert by_keywords.uncited == "inherit"  # read from the settings, for code written before them
    with pytest.raises(AttributeError, match="frozen"):
        by_keywords.uncited = "zero"
    with pytest.raises(AttributeError, match="frozen"):
        by_keywords.settings = ScoringSettings()
    with pytest.raises(ConfigurationError, match="unknown option"):
        DocLens(judge, uncitted="inherit")
    with pytest.raises(ConfigurationError, match="unknown metric family"):
        DocLens(judge, metrics="doclens,contradiction")  # which families exist is the registry's to say
    assert set(ScoringSettings.names()) <= set(inspect.signature(DocLens).parameters)


def test_the_judges_take_their_settings_and_list_their_options_from_them():
    endpoint = EndpointSettings(base_url="http://127.0.0.1:9/v1", concurrency=3, seed=4)
    judge = load_evaluator("gpt4-json-cot", settings=endpoint)
    assert judge.settings is endpoint and judge.concurrency == 3 and judge.decoding()["seed"] == 4
    same = load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1:9/v1", concurrency=3, seed=4)
    assert same.settings == endpoint and same.signature() == judge.signature()
    with pytest.raises(ConfigurationError, match="concurrency"):
        load_evaluator("gpt4-json-cot", base_url="http://127.0.0.1:9/v1", concurrency=0)
    with pytest.raises(ConfigurationError, match=r"does not take option\(s\) batch_size"):
        load_extractor("llm", base_url="http://127.0.0.1:9/v1", batch_size=4)
    from doclens.evaluators.llm.openai_chat import OpenAIChatJudge
    from doclens.evaluators.models.nli import NLIClassifierEvaluator

    assert set(EndpointSettings.names()) <= set(inspect.signature(OpenAIChatJudge).parameters)
    # a subclass with an __init__ of its own is read as written (its own options reach it)
    crash = load_evaluator("tests.ray_crash_judge:CrashOnceChatJudge", marker="m", trigger="t",
                           base_url="http://127.0.0.1:9/v1", concurrency=2)
    assert crash.marker == "m" and crash.settings.concurrency == 2
    nli = NLIClassifierEvaluator(settings=ModelSettings(model="some/folder", batch_size=4), no_cache=True)
    assert nli.model == "some/folder" and nli.batch_size == 4  # nothing loads before the first pair
    with pytest.raises(ConfigurationError, match="max_length"):
        NLIClassifierEvaluator("some/folder", max_length=4)


def test_settings_and_signatures_pickle_unchanged_into_an_engine():
    """What the Ray engine sends its actors (``doclens score --engine ray``): the worker's scorer
    factory with the driver's settings object, pickled; the scorer it builds has those settings.
    (The Ray round trip itself is tests/engines/test_ray_engine.py's, skipped where Ray is missing.)"""
    from doclens.cli import build_parser
    from doclens.cli.score import build_scorer, scoring_settings

    args = build_parser().parse_args(["score", "x.jsonl", "--evaluator", "overlap", "--premise-scope", "section",
                                      "--section-fallback", "section", "--source-units", "turns", "--uncited",
                                      "inherit", "--metrics", "doclens,source_support", "--max-citations", "2"])
    settings = scoring_settings(args)
    for value in (settings, EndpointSettings(deadline="15m", seed=None), ModelSettings(dtype="bfloat16")):
        assert pickle.loads(pickle.dumps(value)) == value
    make_scorer = pickle.loads(pickle.dumps(functools.partial(build_scorer, args, settings=settings)))
    worker_scorer = make_scorer()
    assert worker_scorer.settings == settings
    assert settings_signature(worker_scorer) == settings_signature(build_scorer(args))
    signature = settings_signature(worker_scorer)
    copied = pickle.loads(pickle.dumps(signature))
    assert type(copied) is Signature and copied == signature and copied.fields == signature.fields


#: full signatures as the code before issue 40 rendered them (``{v}``: the package version), with the
#: citation family's ``cite:styled`` of issue 48, for a scorer's settings alone and for runs: the Signature
#: object must render them byte for byte
PINNED = {
    "overlap, defaults, settings": (
        {}, None, "doclens:{v}|task:*|judge:overlap:t0.8|extract:none|prompts:none|agg:pooled|uncited:zero|"
                  "maxcit:none|unparsed:zero|premise:note|uncited-outputs:na|cite:styled"),
    "overlap, section scope and fallback, settings": (
        {"premise_scope": "section", "section_fallback": "section"}, None,
        "doclens:{v}|task:*|judge:overlap:t0.8|extract:none|prompts:none|agg:pooled|uncited:zero|maxcit:none|"
        "unparsed:zero|premise:section|sections:section|uncited-outputs:na|cite:styled"),
    "overlap, every citation option, settings": (
        {"uncited": "inherit-across-sections", "max_citations": 2, "on_unparsed": "exclude",
         "uncited_outputs": "strict", "source_units": "sentences", "question_statements": "sentences"}, None,
        "doclens:{v}|task:*|judge:overlap:t0.8|extract:none|prompts:none|agg:pooled|"
        "uncited:inherit-across-sections|maxcit:2|unparsed:exclude|units:sentences|qstatements:sentences|"
        "premise:note|uncited-outputs:strict|cite:styled"),
    "overlap, defaults, run": (
        {}, "run", "doclens:{v}|task:general+question_summarization|judge:overlap:t0.8|extract:given|prompts:none|"
                   "agg:pooled|uncited:zero|maxcit:none|unparsed:zero|uncited-outputs:na|cite:styled"),
}


@pytest.mark.parametrize("name", list(PINNED))
def test_signatures_render_as_before_and_read_back_field_for_field(name):
    options, what, expected = PINNED[name]
    scorer = DocLens(OverlapEvaluator(), **options)
    if what is None:
        signature = settings_signature(scorer)
    else:
        signature = scorer.score([
            {"id": "g", "prediction": "Fever [0].", "reference": "Fever. Cough.", "source": ["fever"],
             "reference_claims": ["Fever.", "Cough."], "prediction_claims": ["Fever."]},
            {"id": "q", "task": "question_summarization", "prediction": "What treats a fever?",
             "reference": "What is the treatment for fever?", "source": ["What treats my fever?"]}],
            progress=False).signature
    assert isinstance(signature, Signature) and signature == expected.format(v=__version__)
    assert Signature.read(str(signature)).fields == signature.fields
    assert signature.get("judge") == "overlap:t0.8" and signature.get("absent") is None


def test_an_llm_judges_signature_renders_as_before():
    judge = load_evaluator("gpt4-json-cot", dry_run=True, seed=3, temperature=0.5, max_tokens=100)
    signature = settings_signature(DocLens(judge, judge.make_extractor()))
    assert signature == (f"doclens:{__version__}|task:*|judge:gpt4-json-cot:gpt-4o|style:json_cot|"
                         "extract:llm:gpt-4o|prompts:480c8bcd|T:0.5|max:100|seed:3|agg:pooled|uncited:zero|"
                         "maxcit:none|unparsed:zero|premise:note|uncited-outputs:na|cite:styled")


def test_a_signature_is_data_and_text_read_in_one_place():
    signature = Signature([("doclens", "1"), ("judge", "custom(pkg.Judge):m"), ("uncited", "zero")])
    assert signature == "doclens:1|judge:custom(pkg.Judge):m|uncited:zero"
    assert signature.get("judge") == "custom(pkg.Judge):m" and signature.as_dict()["uncited"] == "zero"
    assert Signature.read("doclens:1|judge:custom(pkg.Judge):m|uncited:zero").fields == signature.fields
    assert Signature.read(signature) is signature and Signature.read(None) == ""
    other = Signature([("doclens", "1"), ("judge", "custom(pkg.Judge):m"), ("uncited", "inherit")])
    assert signature.differences(other) == ["uncited: zero != inherit"]
    with pytest.raises(AttributeError):
        signature.fields = ()  # type: ignore[misc]
    assert Signature.read("odd|a:1") == "odd|a:1"  # text that is not key:value is kept as written
