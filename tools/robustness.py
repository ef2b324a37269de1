"""Run every chapter that trains under seeds 0-4 on both TensorFlow CPU kernel paths.

A chapter trains when its code calls ``claims.check`` (or ``claims.report``): those calls are
the claims its prose makes about trained models. Each such chapter is executed top to bottom
in a fresh kernel for every ``COURSE_SEED`` in 0-4 and every ``TF_ENABLE_ONEDNN_OPTS`` in 0, 1
(TensorFlow's own Eigen kernels and oneDNN's), ten runs a chapter. Every value the claims
record is collected, and the table of min, median and max beside the asserted bound is
written to ``helpers/robustness.json`` (the chapters glue the ranges from there into their
prose) and into ``status.md``. The table records a hash of each chapter's code cells, so the
tests fail when a chapter's code changed after the table was made.

    python3.11 tools/course.py robustness            # every chapter that trains
    python3.11 tools/course.py robustness chapters/05_lstm_attention_time_series.ipynb

After it, re-execute the chapters it ran (``tools/course.py execute``) so that the ranges
their pages quote are the new ones.

Every metric has a one-line Korean description in ``DESCRIPTIONS`` below, shown beside its
name on the status page (``tests/test_robustness.py`` fails for a metric without one). After
editing a description (or how the tables show numbers), rewrite the status page's tables from
the stored results, without running any chapter:

    .venv/bin/python tools/robustness.py --status

The tables show a metric in the unit the chapters print it in (``unit``): a share of cases, such
as an accuracy or a rate, as a percentage (0.97 -> 97.0%), a difference of two such shares in
percentage points, everything else (weights, ratios, seconds, throughputs) as a number.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import cpu_paths  # noqa: E402
from tools.colab_cell import is_colab_cell  # noqa: E402
from tools.execute import errors, run  # noqa: E402
from tools.markers import replace_block  # noqa: E402
from tools.toc import toc_notebooks  # noqa: E402

TABLE = ROOT / "helpers" / "robustness.json"
STATUS = ROOT / "status.md"
SEEDS = (0, 1, 2, 3, 4)
KERNEL_PATHS = ("0", "1")  # TF_ENABLE_ONEDNN_OPTS: TensorFlow's Eigen kernels, oneDNN's
CLAIM_FUNCTIONS = {"check", "report"}
STATUS_ONLY = "--status"
SWEEP = ROOT / "helpers" / "robustness_sweep.json"

# What each metric measures, in Korean, for the status page: one line, no trailing period.
# A chapter that calls claims.check or claims.report adds one line here per metric.
DESCRIPTIONS = {
    "ch5_accuracy_lstm": "LSTM 분류기의 테스트 정확도",
    "ch5_accuracy_bahdanau": "LSTM + 가산 어텐션 분류기의 테스트 정확도",
    "ch5_accuracy_mha": "LSTM + 멀티 헤드 어텐션 분류기의 테스트 정확도",
    "ch5_train_seconds": "세 모델을 함께 학습한 시간(초)",
    "ch5_sequence_steps_per_second": "세 모델을 합친 학습 처리량(모델 3개의 시퀀스·시점/초)",
    "ch5_untrained_share_ratio_bahdanau":
        "학습 전 가산 어텐션이 정답 시점에 싣는 가중치, 균등 분포의 몫에 대한 배수",
    "ch5_untrained_share_ratio_mha":
        "학습 전 멀티 헤드 어텐션이 정답 시점에 싣는 가중치, 균등 분포의 몫에 대한 배수",
    "ch5_share_ratio_bahdanau":
        "학습한 가산 어텐션이 정답 시점에 싣는 가중치, 균등 분포의 몫에 대한 배수",
    "ch5_share_ratio_mha":
        "학습한 멀티 헤드 어텐션이 정답 시점에 싣는 가중치, 균등 분포의 몫에 대한 배수",
    "ch5_share_gap": "정답 시점에 실린 가중치의 몫의 차이: 가산 어텐션 − 멀티 헤드 어텐션",
    "ch5_after_pattern_ratio":
        "가산 어텐션이 패턴 직후 8시점에 싣는 가중치, 균등 분포의 몫에 대한 배수",
    "ch5_gunpoint_accuracy": "GunPoint에서 LSTM + 멀티 헤드 어텐션의 테스트 정확도",
    "ch5_occlusion_drop_top": "가중치 상위 8시점을 잡음으로 가렸을 때 정확도가 떨어진 폭",
    "ch5_occlusion_drop_random": "무작위 8시점을 잡음으로 가렸을 때 정확도가 떨어진 폭",
    "ch5_occlusion_gap": "두 가리기의 정확도 하락 차이: 가중치 상위 − 무작위",
    "ch6_train_seconds": "Seq2Seq 모델의 학습 시간(초)",
    "ch6_sequence_steps_per_second": "학습 처리량(모델 1개, 시퀀스·시점/초)",
    "ch6_exact_match": "처음 보는 수 1,000개의 완전 일치 정확도",
    "ch6_exact_match_3plus": "세 자리 이상인 수의 완전 일치 정확도",
    "ch6_digit_on_own_position": "숫자 음절이 자기 숫자에 가장 큰 가중치를 주는 비율",
    "ch6_place_on_own_position":
        "자리 이름(십·백·천)이 자기 자리 숫자에 가장 큰 가중치를 주는 비율",
    "ch6_unit_on_own_position": "만이 만의 자리 숫자에 가장 큰 가중치를 주는 비율",
    "ch6_digit_within_one": "숫자 음절이 가장 크게 보는 곳이 자기 숫자 ±1 안인 비율",
    "ch6_place_within_one": "자리 이름이 가장 크게 보는 곳이 자기 자리 ±1 안인 비율",
    "ch6_unit_within_one": "만이 가장 크게 보는 곳이 만의 자리 ±1 안인 비율",
    "ch6_zero_to_nonzero_weight": "0인 숫자가 받는 가중치, 0이 아닌 숫자가 받는 가중치에 대한 배수",
    "ch6_nonzero_digit_weight": "0이 아닌 숫자 하나가 모든 출력 단계에서 받은 가중치의 합(평균)",
    "ch6_zero_weight_from_digits": "0이 받는 가중치 가운데 숫자 음절에서 온 몫",
    "ch6_end_token_on_trailing_zeros":
        "0으로 끝나는 수에서 끝 토큰이 끝의 0들 가운데 하나를 가장 크게 보는 비율",
    "ch6_zero_read_as_yeong": "0을 ‘영’으로 읽었는가(읽었으면 1)",
    "ch6_short_exact_match": "1부터 99까지의 수를 맞게 읽은 비율",
    "ch6_short_read_as_three_digits":
        "1부터 99까지의 수를 세 자리 수(100–999)의 읽기로 읽은 비율",
    "ch6_short_digit_read_where_looked": ("세 자리 수처럼 읽은 한두 자리 수에서 숫자 음절이 "
                                          "가장 크게 본 입력이 그 숫자인 비율"),
    "ch6_stress_eok_count": "아홉 자리 수 두 개의 읽기 가운데 ‘억’이 든 것의 수",
    "ch6_exact_match_without_attention_output":
        "크로스 어텐션의 출력 투영을 0으로 바꾼 모델의 완전 일치 정확도(테스트 앞 200개)",
    "ch8_train_seconds": "작은 트랜스포머의 학습 시간(초)",
    "ch8_sequence_steps_per_second": "학습 처리량(모델 1개, 시퀀스·시점/초)",
    "ch8_exact_match": "처음 보는 수 1,000개의 완전 일치 정확도",
    "ch8_digit_alignment_head_mean": "헤드 평균 가중치가 숫자 음절마다 자기 숫자에서 가장 큰 비율",
    "ch8_digit_alignment_best_head": "가장 잘 맞는 헤드 하나의 같은 비율",
    "ch9_train_seconds": "디코더 전용 모델을 학습한 시간(초)",
    "ch9_sequence_steps_per_second": "학습 처리량(모델 1개, 시퀀스·시점/초)",
    "ch9_exact_match": "디코더 전용 모델이 처음 보는 수 1,000개를 완전히 맞게 읽은 비율",
    "ch9_cache_max_abs_diff": "KV 캐시를 쓴 생성과 쓰지 않은 생성의 로짓 차이의 최댓값",
    "ch9_cache_speedup": "프롬프트 512개 토큰에서 KV 캐시가 생성을 빠르게 한 배수",
    "ch9_sampling_exact_match_drop": ("수 200개를 온도 0.5와 2로 샘플링해 읽혔을 때 "
                                      "완전히 맞게 읽은 비율의 차이(%p)"),
    "ch9_digit_alignment_best_layer":
        "헤드 평균 가중치가 숫자 음절마다 자기 숫자에서 가장 큰 비율, 더 잘 맞는 레이어에서",
    "ch9_layer1_alignment_first": ("레이어 1에서 같은 비율, 읽기의 첫 음절(맨 앞 숫자를 읽는 "
                                   "음절)만"),
    "ch9_layer1_alignment_lower": "레이어 1에서 같은 비율, ‘만’ 아래 네 자리의 숫자를 읽는 음절만",
    "ch9_layer1_alignment_upper_rest": ("레이어 1에서 같은 비율, ‘만’ 위 네 자리 가운데 맨 앞이 "
                                        "아닌 숫자를 읽는 음절만"),
    "ch9_example_rows_found": ("그림의 여덟 자리 수에서, 레이어 1의 가중치가 읽는 숫자의 칸에서 "
                               "가장 큰 숫자 음절 행의 수"),
    "ch9_greedy_miss_right_probability": ("탐욕적 디코딩이 수를 잘못 읽기 시작한 단계들에서 정답 "
                                          "음절이 받은 확률의 최댓값"),
    "ch9_sampling_truncation_gap": ("샘플링 그림의 단계에서 top-k = 3과 top-p = 0.9로 손본 "
                                    "두 분포의 전체 변동 거리"),
    "ch9_greedy_exact_match_200": ("샘플링과 같은 수 200개를 탐욕적 디코딩으로 완전히 맞게 "
                                   "읽은 비율"),
    "ch10_exact_match_gqa":
        "그룹 쿼리 모델(KV 헤드 2개)이 처음 보는 수 1,000개를 완전히 맞게 읽은 비율",
    "ch10_exact_match_mqa":
        "멀티 쿼리 모델(KV 헤드 1개)이 처음 보는 수 1,000개를 완전히 맞게 읽은 비율",
    "ch10_train_seconds": "두 모델을 함께 학습한 시간(초)",
    "ch10_sequence_steps_per_second": "두 모델을 합친 학습 처리량(모델 2개의 시퀀스·시점/초)",
    "ch11_rope_rival_distance": ("RoPE 헤드에서 거리 1을 처음 이긴 거리 앞에서, 학습 때 보지 못한 "
                                 "거리 가운데 스코어(중앙값)가 가장 높은 거리"),
    "ch11_rope_rival_score": "그 거리의 스코어와 거리 1의 스코어의 차이(숫자열 50개의 중앙값)",
    "ch11_rope_plateau_previous": ("그 거리의 키가 있고 처음 이긴 거리의 키는 아직 없는 쿼리 "
                                   "위치에서, 바로 앞 토큰이 받은 가중치의 평균"),
    "ch11_rope_plateau_rival_weight": "같은 쿼리 위치에서 그 거리의 키가 받은 가중치의 평균",
    "ch11_rope_plateau_unseen_weight": ("같은 쿼리 위치에서 거리 16 이상의 키들이 받은 가중치의 "
                                        "합의 평균"),
    "ch11_rope_plateau_lost": ("같은 쿼리 위치에서 바로 앞 토큰이 가중치를 절반도 받지 못한 "
                               "(숫자열, 위치)의 비율"),
    "ch12_exact_match_mha": ("멀티 헤드 모델(KV 헤드 4개, 레이어 하나)이 처음 보는 네 자리 "
                             "이하의 수 1,000개를 완전히 맞게 읽은 비율"),
    "ch12_exact_match_gqa": ("그룹 쿼리 모델(KV 헤드 2개, 캐시 32개/토큰)이 처음 보는 수 "
                             "1,000개를 완전히 맞게 읽은 비율"),
    "ch12_exact_match_mla": ("멀티 헤드 잠재 어텐션 모델(d_c 28 + d_h^R 4, 캐시 32개/토큰)이 "
                             "처음 보는 수 1,000개를 완전히 맞게 읽은 비율"),
    "ch12_mla_minus_gqa": "같은 캐시에서 MLA 모델의 완전 일치 정확도 − 그룹 쿼리 모델의 것(%p)",
    "ch12_mha_minus_mla": "캐시가 두 배인 멀티 헤드 모델의 완전 일치 정확도 − MLA 모델의 것(%p)",
    "ch12_cache_max_abs_diff": "잠재 캐시를 쓴 생성과 쓰지 않은 생성의 로짓 차이의 최댓값",
    "ch12_absorbed_max_abs_diff": ("학습한 MLA 모델이 흡수한 계산으로 생성한 로짓과 키를 다시 만든 "
                                   "계산으로 생성한 로짓의 차이의 최댓값"),
    "ch12_exact_match_mla_no_rope": ("분리된 RoPE를 뺀 MLA 모델(d_c 32, 캐시 32개/토큰)이 처음 "
                                     "보는 수 1,000개를 완전히 맞게 읽은 비율"),
    "ch12_mla_no_rope_minus_gqa": ("같은 캐시와 같은 위치 정보에서 RoPE 없는 MLA 모델의 완전 일치 "
                                   "정확도 − 그룹 쿼리 모델의 것(%p)"),
    "ch12_exact_match_gqa_wide": ("피드포워드 네트워크를 넓혀(d_ff 95) 파라미터를 RoPE 없는 "
                                  "MLA 모델에 맞춘 그룹 쿼리 모델이 처음 보는 수 1,000개를 "
                                  "완전히 맞게 읽은 비율"),
    "ch12_mla_no_rope_minus_gqa_wide": ("캐시, 위치 정보, 파라미터 수를 맞춘 비교: RoPE 없는 "
                                        "MLA 모델의 완전 일치 정확도 − 넓힌 그룹 쿼리 모델의 "
                                        "것(%p)"),
    "ch12_mla_minus_mla_no_rope": ("분리된 RoPE가 있는 MLA 모델의 완전 일치 정확도 − 없는 MLA "
                                   "모델의 것(%p)"),
    "ch12_train_seconds": "다섯 모델을 함께 학습한 시간(초)",
    "ch12_sequence_steps_per_second": "다섯 모델을 합친 학습 처리량(모델 5개의 시퀀스·시점/초)",
    "ch11_ablation_16_fast_only": ("같은 RoPE 모델에 추가 학습 없이 가장 빠른 쌍 0만 4배 늦췄을 때 "
                                   "길이 16에서 맞게 읽은 비율"),
    "ch11_ablation_16_slow_only": ("같은 RoPE 모델에서 쌍 0은 그대로 두고 쌍 1-3만 4배 늦췄을 때 "
                                   "길이 16에서 맞게 읽은 비율"),
    "ch11_ablation_64_slow_only": "쌍 1-3만 4배 늦춘 같은 모델이 길이 64에서 맞게 읽은 비율",
    "ch11_ablation_64_slow_only_gain": ("쌍 1-3만 늦춘 모델의 길이 64 정확도 − 늦추지 않은 RoPE "
                                        "모델의 것(%p)"),
    "ch11_scaled_64_ntk": ("같은 RoPE 모델에 NTK-aware 보간(4배)을 적용했을 때 길이 64에서 "
                           "맞게 읽은 비율"),
    "ch11_ablation_64_slow_only_over_ntk": ("쌍 1-3만 늦춘 모델의 길이 64 정확도 − NTK-aware를 "
                                            "적용한 모델의 것(%p)"),
    "ch11_train_seconds": "위치 방식이 다른 세 모델을 함께 학습한 시간(초)",
    "ch11_sequence_steps_per_second": "세 모델을 합친 학습 처리량(모델 3개의 시퀀스·시점/초)",
    "ch11_trained_16_sinusoidal": ("길이 16으로 학습한 사인·코사인 위치 인코딩 모델이 "
                                   "길이 16에서 바로 앞 숫자를 맞게 읽은 비율"),
    "ch11_longer_24_sinusoidal": ("같은 사인·코사인 위치 인코딩 모델이 처음 "
                                  "보는 길이 24에서 맞게 읽은 비율"),
    "ch11_longer_32_sinusoidal": ("같은 사인·코사인 위치 인코딩 모델이 처음 "
                                  "보는 길이 32에서 맞게 읽은 비율"),
    "ch11_longer_64_sinusoidal": ("같은 사인·코사인 위치 인코딩 모델이 처음 "
                                  "보는 길이 64에서 맞게 읽은 비율"),
    "ch11_trained_16_rope": ("길이 16으로 학습한 RoPE 모델이 길이 "
                             "16에서 바로 앞 숫자를 맞게 읽은 비율"),
    "ch11_longer_32_rope": "같은 RoPE 모델이 처음 보는 길이 32에서 맞게 읽은 비율",
    "ch11_longer_64_rope": "같은 RoPE 모델이 처음 보는 길이 64에서 맞게 읽은 비율",
    "ch11_trained_16_alibi": ("길이 16으로 학습한 ALiBi 모델이 길이 "
                              "16에서 바로 앞 숫자를 맞게 읽은 비율"),
    "ch11_longer_32_alibi": "같은 ALiBi 모델이 처음 보는 길이 32에서 맞게 읽은 비율",
    "ch11_longer_64_alibi": "같은 ALiBi 모델이 처음 보는 길이 64에서 맞게 읽은 비율",
    "ch11_longer_alibi_drop": "ALiBi 모델의 정확도가 길이 16에서 64로 가며 떨어진 폭(%p)",
    "ch11_longer_rope_previous_at_32": ("RoPE 모델의 앞 토큰 헤드가 위치 "
                                        "32의 쿼리에서 바로 앞 토큰에 준 가중치"),
    "ch11_longer_64_rope_far_weight": ("같은 헤드가 위치 63의 쿼리에서 거리 16 이상(학습 "
                                       "때 본 적 없는 거리)의 키에 준 가중치의 합"),
    "ch11_rope_seen_distance_gap": ("RoPE 모델의 앞 토큰 헤드에서, 거리 1의 스코어에서 학습 때 본 "
                                    "거리 2-15의 가장 높은 스코어를 뺀 값(위치 63의 쿼리)"),
    "ch11_longer_rope_unseen_distance_score": ("같은 헤드에서 학습 때 못 본 거리 16 이상의 "
                                               "스코어 − 거리 1의 스코어 가운데 최댓값"),
    "ch11_longer_rope_first_winning_distance": ("같은 헤드에서 거리 1보다 스코어가 높은 "
                                                "가장 가까운 거리"),
    "ch11_longer_alibi_steep_previous": ("ALiBi 모델 첫 레이어의 헤드 0(경사 1/4)이 위치 "
                                         "63에서 바로 앞 토큰에 준 가중치"),
    "ch11_alibi_most_previous": ("ALiBi 모델 첫 레이어에서 위치 15의 쿼리가 바로 앞 "
                                 "토큰에 준 가중치의 헤드별 최댓값"),
    "ch11_longer_alibi_steep_far": "같은 헤드 0이 위치 63에서 거리 16 이상의 키에 준 가중치의 합",
    "ch11_longer_alibi_steep_previous_change": ("헤드 0이 바로 앞 토큰에 준 가중치의 "
                                                "위치 15와 63 사이의 차이"),
    "ch11_scaled_16_interpolation": ("같은 RoPE 모델에 추가 학습 없이 위치 보간(4배)을 적용했을 때 "
                                     "길이 16에서 맞게 읽은 비율"),
    "ch11_scaled_16_by_parts": ("같은 RoPE 모델에 추가 학습 없이 NTK-by-parts(4배)를 "
                                "적용했을 때 길이 16에서 맞게 읽은 비율"),
    "ch11_scaled_16_yarn": ("같은 RoPE 모델에 추가 학습 없이 YaRN(4배, NTK-by-parts와 온도)을 "
                            "적용했을 때 길이 16에서 맞게 읽은 비율"),
    "ch11_yarn_temperature_change_16": ("YaRN의 온도가 NTK-by-parts만일 때의 길이 16 정확도를 "
                                        "바꾼 폭의 절댓값(%p)"),
    "ch11_scaled_16_ntk": ("같은 RoPE 모델에 추가 학습 없이 NTK-aware 보간(4배)을 적용했을 때 "
                           "길이 16에서 맞게 읽은 비율"),
    "ch11_scaled_64_ntk_gain": ("NTK-aware 보간이 길이 64의 정확도를 원래 RoPE 모델보다 "
                                "올린 폭(%p)"),
    "ch11_longer_alibi_gentle_far": ("ALiBi 모델 첫 레이어의 헤드 3(경사 1/256)이 위치 "
                                     "63에서 거리 16 이상의 키에 준 가중치의 합"),
    "ch14_train_seconds": "연상 기억 모델 다섯 개를 함께 학습한 시간(초)",
    "ch14_sequence_steps_per_second": "다섯 모델을 합친 학습 처리량(모델 5개의 시퀀스·시점/초)",
    "ch14_recall_softmax_16": "소프트맥스 어텐션 모델이 쌍 16개의 쿼리에서 값을 맞힌 비율",
    "ch14_recall_linear_4_16": "선형 어텐션 모델(4×4 상태)이 쌍 16개의 쿼리에서 맞힌 비율",
    "ch14_recall_linear_8_16": "선형 어텐션 모델(8×8 상태)이 쌍 16개의 쿼리에서 맞힌 비율",
    "ch14_recall_delta_8_16": "DeltaNet 모델(8×8 상태)이 쌍 16개의 쿼리에서 맞힌 비율",
    "ch14_recall_gated_delta_8_16": ("Gated DeltaNet 모델(8×8 상태)이 쌍 16개의 쿼리에서 맞힌 "
                                     "비율"),
    "ch14_recall_linear_4_2": "선형 어텐션 모델(4×4 상태)이 쌍 2개의 쿼리에서 맞힌 비율",
    "ch14_recall_linear_8_2": "선형 어텐션 모델(8×8 상태)이 쌍 2개의 쿼리에서 맞힌 비율",
    "ch14_recall_delta_8_2": "DeltaNet 모델(8×8 상태)이 쌍 2개의 쿼리에서 맞힌 비율",
    "ch14_recall_gated_delta_8_2": ("Gated DeltaNet 모델(8×8 상태)이 쌍 2개의 쿼리에서 맞힌 "
                                    "비율(80% 아래면 학습하지 못한 실행)"),
    "ch14_capacity_linear_4": "선형 어텐션 모델(4×4 상태)이 90% 이상 맞힌 쌍의 수의 상한",
    "ch14_capacity_linear_8": "선형 어텐션 모델(8×8 상태)이 90% 이상 맞힌 쌍의 수의 상한",
    "ch14_capacity_delta_8": "DeltaNet 모델(8×8 상태)이 90% 이상 맞힌 쌍의 수의 상한",
    "ch14_capacity_gated_delta_8": ("Gated DeltaNet 모델(8×8 상태)이 90% 이상 맞힌 쌍의 수의 "
                                    "상한"),
    "ch17_train_seconds": ("먼 키의 연상 기억 모델 다섯 개(전체, 창, top-k 둘, NSA)를 함께 학습한 "
                           "시간(초)"),
    "ch17_sequence_steps_per_second": "다섯 모델을 합친 학습 처리량(모델 5개의 시퀀스·시점/초)",
    "ch17_recall_softmax": "전체 어텐션 모델이 창 밖의 쌍을 물은 쿼리에서 값을 맞힌 비율",
    "ch17_recall_window": "슬라이딩 윈도(24개) 모델이 창 밖의 쌍을 물은 쿼리에서 맞힌 비율",
    "ch17_recall_topk": ("top-k(8개, KL로 학습한 인덱서, 준비 없이) 모델이 창 밖의 쌍을 물은 "
                         "쿼리에서 맞힌 비율"),
    "ch17_recall_topk_warm": ("top-k(8개, 앞의 128단계는 전체 어텐션으로 준비) 모델이 창 밖의 쌍을 "
                              "물은 쿼리에서 맞힌 비율"),
    "ch17_recall_nsa": "NSA 모델이 창 밖의 쌍을 물은 쿼리에서 맞힌 비율",
    "ch17_topk_answer_chosen": "top-k 모델(준비 없이)의 인덱서가 읽어야 할 값 토큰을 고른 비율",
    "ch17_topk_warm_answer_chosen": ("top-k 모델(전체로 준비)의 인덱서가 읽어야 할 값 토큰을 고른 "
                                     "비율"),
    "ch17_nsa_answer_chosen": "NSA 모델의 선택 갈래가 쿼리마다 읽어야 할 값 토큰을 고른 비율",
    "ch16_train_seconds": "어텐션만 다른 바이그램-되베끼기 모델 세 개를 함께 학습한 시간(초)",
    "ch16_sequence_steps_per_second": "세 모델을 합친 학습 처리량(모델 3개의 시퀀스·시점/초)",
    "ch16_copy_softmax": "소프트맥스 모델이 트리거 뒤 토큰(되베끼기)을 맞힌 비율",
    "ch16_first_softmax": ("소프트맥스 모델의 헤드가 읽을 것이 없는 쿼리에서 첫 토큰에 준 "
                        "가중치(평균)"),
    "ch16_quiet_softmax": ("소프트맥스 모델에서 어텐션이 더한 벡터의 길이: 읽을 것이 없는 "
                        "쿼리 ÷ 트리거 쿼리"),
    "ch16_previous_softmax": "소프트맥스 모델의 헤드가 트리거 쿼리에서 바로 앞 토큰에 준 가중치",
    "ch16_peak_softmax": ("소프트맥스 모델의 레이어 출력에서 가장 큰 절댓값: 첫 토큰 ÷ "
                          "다른 위치"),
    "ch16_copy_sink_logit": "싱크 로짓 모델이 트리거 뒤 토큰(되베끼기)을 맞힌 비율",
    "ch16_first_sink_logit": ("싱크 로짓 모델의 헤드가 읽을 것이 없는 쿼리에서 첫 토큰에 준 "
                        "가중치(평균)"),
    "ch16_quiet_sink_logit": ("싱크 로짓 모델에서 어텐션이 더한 벡터의 길이: 읽을 것이 없는 "
                        "쿼리 ÷ 트리거 쿼리"),
    "ch16_previous_sink_logit": "싱크 로짓 모델의 헤드가 트리거 쿼리에서 바로 앞 토큰에 준 가중치",
    "ch16_peak_sink_logit": ("싱크 로짓 모델의 레이어 출력에서 가장 큰 절댓값: 첫 토큰 ÷ "
                             "다른 위치"),
    "ch16_copy_gated": "게이트 모델이 트리거 뒤 토큰(되베끼기)을 맞힌 비율",
    "ch16_first_gated": ("게이트 모델의 헤드가 읽을 것이 없는 쿼리에서 첫 토큰에 준 "
                        "가중치(평균)"),
    "ch16_quiet_gated": ("게이트 모델에서 어텐션이 더한 벡터의 길이: 읽을 것이 없는 "
                        "쿼리 ÷ 트리거 쿼리"),
    "ch16_previous_gated": "게이트 모델의 헤드가 트리거 쿼리에서 바로 앞 토큰에 준 가중치",
    "ch16_peak_gated": ("게이트 모델의 레이어 출력에서 가장 큰 절댓값: 첫 토큰 ÷ "
                        "다른 위치"),
    "ch16_learned_softmax": "소프트맥스 모델이 트리거 뒤 토큰을 맞힌 비율(하한 확인)",
    "ch16_learned_gated": "게이트 모델이 트리거 뒤 토큰을 맞힌 비율(하한 확인)",
    "ch16_loud_softmax": ("소프트맥스 모델에서 어텐션이 더한 벡터의 길이의 비(하한 확인): "
                          "읽을 것이 없는 쿼리 ÷ 트리거 쿼리"),
    "ch16_quieter_gated": ("게이트 모델에서 어텐션이 더한 벡터의 길이의 비(상한 확인): "
                           "읽을 것이 없는 쿼리 ÷ 트리거 쿼리"),
    "ch16_sink_share": ("싱크 로짓 모델에서 읽을 것이 없는 쿼리의 가중치 가운데 싱크의 열이 "
                        "가져간 몫"),
    "ch16_uniform_share": "읽을 것이 없는 쿼리가 모든 키에 고르게 나눌 때 첫 토큰이 받는 몫(평균)",
}


def code_cells(path: Path) -> list[str]:
    """The chapter's code cells, without the Colab set-up cell (it installs helpers in Colab
    only, and changes with the repository's address, not with what the chapter computes)."""
    nb = nbformat.read(path, as_version=4)
    return [cell.source for cell in nb.cells
            if cell.cell_type == "code" and not is_colab_cell(cell)]


def code_hash(path: Path) -> str:
    """SHA-256 of the chapter's code cells, in order; markdown and outputs do not count."""
    return hashlib.sha256(json.dumps(code_cells(path)).encode()).hexdigest()


def claimed_metrics(path: Path) -> dict[str, str]:
    """``{metric name: "check" or "report"}`` for every claim call in the chapter's code."""
    found = {}
    for source in code_cells(path):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics; claims are never written in them
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name not in CLAIM_FUNCTIONS:
                continue
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise ValueError(f"{path.name}: {ast.unparse(node)[:80]} - name every claim "
                                 "with a string literal, so that the tools can find it")
            found[first.value] = name
    return found


def training_chapters() -> list[Path]:
    """The toc's chapters that make claims about trained models."""
    return [path for path in toc_notebooks() if claimed_metrics(ROOT / path)]


def run_once(path: Path, seed: int, kernel_path: str,
             cpu: str = "native") -> tuple[list[dict], list[str], float]:
    """Execute ``path`` once; return (recorded metrics, error messages, seconds)."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        metrics_file = Path(tmp) / "metrics.jsonl"
        env = {"COURSE_SEED": str(seed), "TF_ENABLE_ONEDNN_OPTS": kernel_path,
               "COURSE_METRICS": str(metrics_file), **cpu_paths.environment(cpu)}
        start = time.perf_counter()
        run(nb, path.parent, allow_errors=True, env=env)
        seconds = time.perf_counter() - start
        lines = metrics_file.read_text(encoding="utf-8").splitlines() \
            if metrics_file.exists() else []
    return [json.loads(line) for line in lines], errors(nb), seconds


def summarise(records: list[dict]) -> dict:
    """Per metric: the bound, every value in run order, and min/median/max."""
    metrics: dict[str, dict] = {}
    for record in records:
        entry = metrics.setdefault(record["name"], {"at_least": record["at_least"],
                                                    "at_most": record["at_most"],
                                                    "values": []})
        entry["values"].append(_significant(record["value"]))
        entry["fmt"] = record.get("fmt", ".3f")
    for entry in metrics.values():
        values = entry["values"]
        entry.update(min=min(values), median=_significant(statistics.median(values)),
                     max=max(values))
    return metrics


def _significant(value: float) -> float:
    """``value`` to six significant digits: compact, and a small value (a difference of
    2e-5) is not rounded away to 0."""
    return float(f"{value:.6g}")


def measure(path: Path, seeds=SEEDS, cpu: str = "native") -> dict:
    """Run one chapter for every seed and kernel path; return its table entry."""
    records, runs = [], []
    for seed in seeds:
        for kernel_path in KERNEL_PATHS:
            found, errors, seconds = run_once(ROOT / path, seed, kernel_path, cpu)
            records += found
            runs.append({"seed": seed, "onednn": int(kernel_path), "errors": errors,
                         "seconds": round(seconds, 1)})
            print(f"{path.stem} seed {seed} oneDNN {kernel_path} ({cpu}): {seconds:5.1f} s"
                  + (f", {len(errors)} errors: {errors}" if errors else ""), flush=True)
    return {"code_hash": code_hash(ROOT / path), "runs": runs, "metrics": summarise(records)}


# How the tables show a metric (see unit): (factor, suffix)
NUMBER, PERCENT, POINTS, STATED_POINTS = (1, ""), (100, "%"), (100, "%p"), (1, "%p")
# Words of a description that make a metric a share of cases (the chapters print it as 97.0%),
# or, with a word of difference, a difference of two shares (in percentage points)
SHARE_WORDS = ("정확도", "비율")
DIFFERENCE_WORDS = ("차이", "폭")


def unit(name: str, entry: dict) -> tuple[int, str]:
    """How the status page shows metric ``name``: ``PERCENT``, ``POINTS``, ``STATED_POINTS``
    or ``NUMBER``, each a (factor, suffix) pair.

    A metric is a share of cases when the chapter formats it as a percentage (``fmt`` ending in
    ``%``) or its description in ``DESCRIPTIONS`` names an accuracy or a rate (정확도, 비율):
    0.97 shows as 97.0%. A share whose description names a difference or a drop (차이, 폭) is
    a difference of shares, in percentage points: 0.215 shows as 21.5%p. A description that
    states ``(%p)`` is already in points (the chapter multiplied by 100): 56 shows as 56%p.
    A multiple (배수), and any value outside what a share can be ([0, 1], or [-1, 1] for a
    difference), is a number, as are weights, seconds and throughputs.
    """
    what = DESCRIPTIONS.get(name, "")
    values = [v for v in (entry.get("min"), entry.get("max"), *entry.get("values", ()))
              if v is not None]
    if "(%p)" in what:
        return STATED_POINTS
    if "배수" in what:
        return NUMBER
    share = entry.get("fmt", "").endswith("%") or any(w in what for w in SHARE_WORDS)
    if share and any(w in what for w in DIFFERENCE_WORDS):
        return POINTS if all(-1 <= v <= 1 for v in values) else NUMBER
    return PERCENT if share and all(0 <= v <= 1 for v in values) else NUMBER


def bound_text(entry: dict, shown: tuple[int, str] = NUMBER) -> str:
    """The asserted bound, in the unit ``shown`` (see :func:`unit`)."""
    low, high = entry["at_least"], entry["at_most"]
    factor, suffix = shown

    def end(value: float) -> str:
        return f"{value * factor:g}{suffix}"

    if low is None and high is None:
        return "—"
    if high is None:
        return f"≥ {end(low)}"
    if low is None:
        return f"≤ {end(high)}"
    return f"{end(low)} – {end(high)}"


def missing_descriptions(names) -> list[str]:
    """The metrics among ``names`` that ``DESCRIPTIONS`` does not describe."""
    return [name for name in names if not DESCRIPTIONS.get(name, "").strip()]


def markdown(table: dict, seeds=SEEDS, cpu: str = "native") -> str:
    """The status page's section: one row per metric of every chapter that trains.

    The metric's name and what it measures share a cell, one above the other, so that the
    table fits the page's column on screen and in print (tests/test_browser.py measures it).
    """
    lines = ["| 장 | 지표와 무엇을 재는가 | 최소 | 중앙값 | 최대 | 장이 단언하는 범위 |",
             "|---|---|---:|---:|---:|---|"]
    for chapter, entry in table["chapters"].items():
        for name, m in entry["metrics"].items():
            what, shown = DESCRIPTIONS.get(name, "—"), unit(name, m)
            lines.append(f"| {Path(chapter).stem[:2]} | `{name}`<br>{what} | "
                         f"{_shown(m['min'], shown)} | {_shown(m['median'], shown)} | "
                         f"{_shown(m['max'], shown)} | {bound_text(m, shown)} |")
    runs = len(seeds) * len(KERNEL_PATHS)
    path = " AVX2로 제한한 벡터 명령(`tools/cpu_paths.py`)." if cpu == "avx2" else ""
    return ("\n".join(lines) + f"\n\n(장마다 {runs}회 실행: `COURSE_SEED` "
            f"{seeds[0]}–{seeds[-1]} × `TF_ENABLE_ONEDNN_OPTS` 0·1.{path} {table['when']}, "
            f"{table['versions']})")


def _shown(value: float, shown: tuple[int, str] = NUMBER) -> str:
    """A table cell: four significant digits, large numbers whole with thousands separators; a
    share or a difference of shares (``shown``, see :func:`unit`) times 100 with its unit and at
    least one decimal, as the chapters print them (0.97 -> 97.0%, 0.9675 -> 96.75%)."""
    factor, suffix = shown
    value = value * factor
    if abs(value) >= 1e3:
        return f"{value:,.0f}{suffix}"
    text = f"{value:.4g}"
    if factor != 1 and "." not in text and "e" not in text:
        text += ".0"
    return text + suffix


def versions() -> str:
    import importlib.metadata as md  # noqa: PLC0415
    import platform  # noqa: PLC0415

    try:
        tensorflow = md.version("tensorflow-cpu")
    except md.PackageNotFoundError:
        tensorflow = md.version("tensorflow")
    return (f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
            f"TensorFlow {tensorflow}, Keras {md.version('keras')}")


def write_status() -> str:
    """Rewrite the status page's tables from ``helpers/robustness.json`` and, if there is one,
    ``helpers/robustness_sweep.json``; run no chapter."""
    text = markdown(json.loads(TABLE.read_text(encoding="utf-8")))
    replace_block(STATUS, "robustness", text)
    if SWEEP.exists():
        swept = sweep_markdown(json.loads(SWEEP.read_text(encoding="utf-8")))
        replace_block(STATUS, "robustness-sweep", swept)
        text += "\n\n" + swept
    return text


def warn_about_missing_descriptions(chosen: list[Path]) -> None:
    missing = missing_descriptions(name for path in chosen
                                   for name in claimed_metrics(ROOT / path))
    if missing:
        print(f"tools/robustness.py: add a Korean description to DESCRIPTIONS for {missing} "
              "(the status page shows — until then, and the tests fail)", flush=True)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tools/robustness.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="chapters to run (default: every chapter that trains)")
    parser.add_argument("--status", action="store_true",
                        help="rewrite the status page's tables from the stored results only")
    parser.add_argument("--seeds", type=seed_range, default=SEEDS,
                        help="a sweep over other seeds, e.g. 0-9 (default 0-4: the table)")
    parser.add_argument("--cpu", choices=cpu_paths.CHOICES, default="native",
                        help="avx2: cap the vector instructions as tools/cpu_paths.py says")
    return parser.parse_args(argv)


def seed_range(text: str) -> tuple[int, ...]:
    """``"0-9"`` -> (0, 1, ..., 9); ``"7"`` -> (7,)."""
    first, _, last = text.partition("-")
    try:
        return tuple(range(int(first), int(last or first) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds like 0-9 or 7; got {text!r}") from None


def main(argv: list[str]) -> None:
    args = parse(argv)
    if args.status:
        print(write_status())
        return
    chosen = args.notebooks or training_chapters()
    warn_about_missing_descriptions(chosen)
    if args.seeds != SEEDS or args.cpu != "native":
        sweep(chosen, args.seeds, args.cpu)
        return
    measured = {path.as_posix(): measure(path) for path in chosen}
    # read the table only now: another run may have written other chapters meanwhile
    table = json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {}
    chapters = {**table.get("chapters", {}), **measured}
    keep = {p.as_posix() for p in training_chapters()}
    chapters = {name: chapters[name] for name in sorted(chapters) if name in keep}
    table = {"when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
             "versions": versions(), "chapters": chapters}
    TABLE.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    replace_block(STATUS, "robustness", markdown(table))
    print(markdown(table))
    exit_on_errors(chapters)


def sweep(chosen: list[Path], seeds: tuple[int, ...], cpu: str) -> None:
    """A run beyond the table (other seeds, or the AVX2 path). Each chapter's results replace
    its earlier sweep in ``helpers/robustness_sweep.json``, and the status page shows, for every
    claim, its range and in how many runs its bound held. The table itself is not touched."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    measured = {}
    for path in chosen:
        entry = measure(path, seeds, cpu)
        entry.update(seeds=list(seeds), cpu=cpu, when=when, versions=versions())
        measured[path.as_posix()] = entry
    # read the file only now: another run may have written other chapters meanwhile
    table = json.loads(SWEEP.read_text(encoding="utf-8")) if SWEEP.exists() else {}
    chapters = {**table.get("chapters", {}), **measured}
    table = {"chapters": {name: chapters[name] for name in sorted(chapters)}}
    SWEEP.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    replace_block(STATUS, "robustness-sweep", sweep_markdown(table))
    print(sweep_markdown(table))


def held(entry: dict) -> int:
    """In how many of the runs the claim's bound held (a report has no bound: every run)."""
    low, high = entry["at_least"], entry["at_most"]
    return sum((low is None or v >= low) and (high is None or v <= high)
               for v in entry["values"])


def sweep_markdown(table: dict) -> str:
    """The status page's section for the sweeps: every claim (not the reports) of every chapter
    swept, its range, its bound and in how many runs the bound held. The metric's name
    starts with its chapter, so the table has no chapter column and fits a printed page."""
    lines = ["| 지표 | 최소 | 중앙값 | 최대 | 장이 단언하는 범위 | 성립한 실행 |",
             "|---|---:|---:|---:|---|---:|"]
    notes = []
    for chapter, entry in table["chapters"].items():
        for name, m in entry["metrics"].items():
            if m["at_least"] is None and m["at_most"] is None:
                continue
            shown = unit(name, m)
            lines.append(f"| `{name}` | {_shown(m['min'], shown)} | "
                         f"{_shown(m['median'], shown)} | {_shown(m['max'], shown)} | "
                         f"{bound_text(m, shown)} | {held(m)}/{len(m['values'])} |")
        cpu = ", 벡터 명령 AVX2로 제한" if entry["cpu"] == "avx2" else ""
        notes.append(f"{Path(chapter).stem[:2]}장: `COURSE_SEED` {entry['seeds'][0]}–"
                     f"{entry['seeds'][-1]} × `TF_ENABLE_ONEDNN_OPTS` 0·1{cpu}, {entry['when']}")
    return "\n".join(lines) + "\n\n(" + "; ".join(notes) + ")"


def exit_on_errors(chapters: dict) -> None:
    failed = [(c, r) for c, e in chapters.items() for r in e["runs"] if r["errors"]]
    if failed:
        sys.exit(f"runs with errors: {failed}")


if __name__ == "__main__":
    main(sys.argv[1:])
