"""Configuration: profiles, routes, evidence categories, glossary and analysis rules.

Everything a deployment may want to tune lives in `configs/` as YAML and is validated
here with `extra="forbid"`, so a misspelt key is an error rather than a silent default.
"""
from __future__ import annotations

from .base import DEFAULT_PROFILE, StrictConfig
from .settings import (AgreementCalibration, ChapterSettings, ChunkingSettings, ConfidenceSettings, ConflictSettings,
                       CrossEncoderSettings, CrossLingualCalibration, EmbedderSettings, FilesSettings,
                       GeneratorSettings, IndexSettings, JUDGE_FP16_REFUSED, JudgeSettings, LimitsSettings,
                       LocalLLMSettings, MAX_QUESTION_CHARS_CEILING, ModelSettings, OpenAICompatSettings, ProseReading,
                       RERANK_COMPONENTS, RerankerSettings, RetrievalSettings, Settings, TracesSettings,
                       judge_dtype_name)
from .rules import AnalysisRules, CategoryRule, CategoryRules, Glossary, Normalisation, Route, RouteTable
from .loading import Profile, load_config_file, load_profile

__all__ = ["DEFAULT_PROFILE", "StrictConfig", "AgreementCalibration", "ChapterSettings", "ChunkingSettings",
           "ConfidenceSettings", "ConflictSettings", "CrossEncoderSettings", "CrossLingualCalibration",
           "EmbedderSettings", "FilesSettings", "GeneratorSettings", "IndexSettings", "JUDGE_FP16_REFUSED",
           "JudgeSettings", "LimitsSettings", "LocalLLMSettings", "MAX_QUESTION_CHARS_CEILING", "ModelSettings",
           "OpenAICompatSettings", "ProseReading", "RERANK_COMPONENTS", "RerankerSettings", "RetrievalSettings",
           "Settings", "TracesSettings", "judge_dtype_name", "AnalysisRules", "CategoryRule", "CategoryRules",
           "Glossary", "Normalisation", "Route", "RouteTable", "Profile", "load_config_file", "load_profile"]
