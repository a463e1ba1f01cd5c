"""Generic box helpers: key-value box parsing, IoU, centre test, Qwen2.5-VL smart resize and the
coordinate conventions. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import pytest

from lensbench.core.errors import ConfigError
from lensbench.scoring.bbox import box_from_value, center_in_box, find_key_boxes, iou, smart_resize, to_original_pixels


def test_find_key_boxes():
    assert find_key_boxes('{"bbox_2d": [1, 2, 3, 4]} and {"bbox_2d": null}') == [(1.0, 2.0, 3.0, 4.0), None]
    assert find_key_boxes("box = [5, 6, 7, 8]", key="box") == [(5.0, 6.0, 7.0, 8.0)]
    assert find_key_boxes("{'bbox_2d': (1, 2, 3, 4)}") == []            # a tuple is not a list value
    assert find_key_boxes('{"bbox_2d": [\'1\', "2", 3, 4]}') == [(1.0, 2.0, 3.0, 4.0)]
    assert find_key_boxes('"bbox_2d": [1, 2, 3, 4, 5]') == []
    assert box_from_value([[1, 2, 3, 4]]) == (True, (1.0, 2.0, 3.0, 4.0))
    assert box_from_value([1, 2, float("inf"), 4]) == (False, None)
    assert box_from_value(None) == (True, None)


def test_iou_values():
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [20, 20, 30, 30]) == 0.0
    assert iou([0, 0, 0, 0], [0, 0, 0, 0]) == 0.0
    assert iou([0, 0, 10, 10], None) == 0.0
    assert iou([0, 0, 10, 10], [10, 0, 0, 10]) == 0.0                  # inverted box: no extent
    # touching edges: zero intersection
    assert iou([0, 0, 10, 10], [10, 0, 20, 10]) == 0.0
    # containment: 4*4 / 10*10
    assert iou([0, 0, 10, 10], [3, 3, 7, 7]) == pytest.approx(0.16)


def test_center_in_box_borders_included():
    assert center_in_box([0, 0, 10, 10], [4, 4, 6, 6])
    assert center_in_box([0, 0, 10, 10], [8, 8, 12, 12])               # centre (10, 10) on the corner
    assert not center_in_box([0, 0, 10, 10], [9, 9, 13, 13])           # centre (11, 11)
    assert center_in_box([0, 0, 0, 0], [0, 0, 0, 0])


def test_smart_resize_hand_computed():
    # 1080x1920: round(38.57)=39 -> 1092, round(68.57)=69 -> 1932; within budget
    assert smart_resize(1080, 1920) == (1092, 1932)
    # 3000x4000 under 1280*28*28: beta = sqrt(12e6/1003520) = 3.458; floor(30.98)=30 -> 840, floor(41.31)=41 -> 1148
    assert smart_resize(3000, 4000, max_pixels=1280 * 28 * 28) == (840, 1148)
    # tiny image scaled up to min_pixels: 20x20 -> beta = sqrt(3136/400) = 2.8, ceil(2)=2 -> 56
    assert smart_resize(20, 20) == (56, 56)
    # half to even: 42/28 = 1.5 -> 2 -> 56; 70/28 = 2.5 -> 2 -> 56
    assert smart_resize(42, 70) == (56, 56)
    with pytest.raises(ValueError):
        smart_resize(1, 500)


def test_coordinate_conventions():
    orig, sent = (3000, 2000), (1500, 1000)
    want = (600.0, 400.0, 1200.0, 1000.0)
    conv = lambda b, f, **kw: to_original_pixels(b, f, sent_size=sent, orig_size=orig, **kw)  # noqa: E731
    assert conv([300, 200, 600, 500], "abs") == pytest.approx(want)
    assert conv([200, 200, 400, 500], "rel1000") == pytest.approx(want)
    assert conv([0.2, 0.2, 0.4, 0.5], "rel1") == pytest.approx(want)
    assert conv([200, 200, 500, 400], "yxyx1000") == pytest.approx(want)
    # abs-resized: smart_resize(1000, 1500) = (1008, 1512) (round 35.7->36, 53.57->54)
    assert conv([1512 * 0.2, 1008 * 0.2, 1512 * 0.4, 1008 * 0.5], "abs-resized") == pytest.approx(want)
    # custom resize bounds: factor 32 -> round(31.25)=31 -> 992, round(46.9)=47 -> 1504
    assert conv([1504 * 0.2, 992 * 0.2, 1504 * 0.4, 992 * 0.5], "abs-resized",
                resize={"factor": 32, "min_pixels": 1, "max_pixels": 10**8}) == pytest.approx(want)
    with pytest.raises(ConfigError):
        conv([0, 0, 1, 1], "xywh")
