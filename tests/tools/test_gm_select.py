"""GroundingME construction (Sec. 3.2.1 step 3, Sec. 3.2.3): the count-favouring NMS and the
selection / category rules on crafted boxes; every expected result is worked out by hand in the
comments."""

from __future__ import annotations

import random

import pytest

from lensbench.tools.groundingme.boxes import Detection, count_nms
from lensbench.tools.groundingme.select import (SelectionRules, assign_category, has_text_cue, pick_per_image,
                                                select_candidates)


def D(label, x1, y1, x2, y2, score=0.5):
    return Detection(box=(x1, y1, x2, y2), label=label, score=score)


def test_nms_favours_the_more_numerous_class_over_the_higher_score():
    a, b, c = D("cup", 0, 0, 10, 10), D("cup", 20, 0, 30, 10), D("cup", 40, 0, 50, 10)
    mug = D("mug", 0, 0, 10, 9, score=0.9)      # IoU(a, mug) = 90 / 100 = 0.9; mug has 1 box, cup 3
    plate = D("plate", 2, 0, 12, 10, score=0.8)  # IoU(a, plate) = 80 / 120 = 0.667 > 0.5; plate has 2
    plate2 = D("plate", 60, 60, 70, 70)
    kept = count_nms([mug, a, plate, b, plate2, c], iou_threshold=0.5)
    # score-first NMS would keep mug (0.9) and drop a; the paper's rule keeps a (cup: 3 boxes)
    assert kept == [a, b, plate2, c]


def test_nms_ties_by_score_and_keeps_iou_equal_to_threshold():
    hi, lo = D("cup", 0, 0, 10, 10, 0.9), D("cup", 1, 0, 11, 10, 0.3)  # IoU = 90 / 110 = 0.818
    j, k = D("bowl", 100, 100, 110, 110, 0.9), D("bowl", 100, 100, 110, 120, 0.8)  # IoU = 100 / 200 = 0.5
    assert count_nms([lo, hi, j, k], 0.5) == [hi, j, k]   # lo suppressed by hi; k kept (0.5 is not > 0.5)
    assert count_nms([lo, hi, j, k], 0.4) == [hi, j]      # now 0.5 > 0.4 drops k
    with pytest.raises(ValueError):
        count_nms([hi], 1.5)


def test_selection_filters_and_flags():
    rules = SelectionRules()  # paper: >= 3 per class, <= 50% area, preferred > 5, dense >= 8
    people = [D("person", 10 * i + 5, 40, 10 * i + 12, 60) for i in range(7)]  # 7 small people
    edge = D("person", 0, 70, 6, 90)                                         # touches x = 0
    huge = D("person", 10, 10, 90, 80)   # 80 * 70 = 5600 = 56% of 100 x 100 > 50%: dropped, but counted
    cups = [D("cup", 5, 5, 9, 9), D("cup", 20, 5, 24, 9), D("cup", 40, 5, 44, 9)]   # 3 -> kept, not preferred
    cars = [D("car", 60, 90, 70, 98), D("car", 80, 90, 90, 98)]                      # 2 -> dropped
    cands = select_candidates("img.jpg", 100, 100, people + [edge, huge] + cups + cars, rules)
    by = {(c.det.label, c.det.box): c for c in cands}
    assert len(cands) == 7 + 1 + 3                      # people (8 of 9), cups
    p0 = by[("person", people[0].box)]
    assert p0.class_count == 9 and p0.preferred and p0.dense and not p0.truncated
    assert p0.area_ratio == pytest.approx(7 * 20 / 10000)
    assert by[("person", edge.box)].truncated
    cup = by[("cup", cups[0].box)]
    assert cup.class_count == 3 and not cup.preferred and not cup.dense
    # manual HR-Bench boxes skip the class-count rule, not the area rule
    small = select_candidates("hr.jpg", 100, 100, [D("kite", 50, 50, 52, 53), huge], rules, source="small")
    assert [c.det.label for c in small] == ["kite"] and small[0].source == "small"


def test_pick_per_image_prefers_numerous_classes():
    rules = SelectionRules()
    dets = [D("cup", 10 * i, 0, 10 * i + 5, 5) for i in range(3)] + [D("tree", 10 * i, 50, 10 * i + 5, 55)
                                                                     for i in range(6)]
    cands = select_candidates("i.jpg", 100, 100, dets, rules)
    picked = pick_per_image(cands, 4, random.Random(0))
    assert len(picked) == 4 and all(c.det.label == "tree" for c in picked)  # 6 trees are preferred over 3 cups
    assert pick_per_image(cands, None, random.Random(0)) == cands
    # seeded: the same seed gives the same pick
    assert pick_per_image(cands, 4, random.Random(7)) == pick_per_image(cands, 4, random.Random(7))


@pytest.mark.parametrize("text,want", [
    ("The boat shows the number 1-1-03 on its hull.", True),
    ('A sign reading "EXIT" above the door.', True),
    ("A label with the word ‘Cafe’ printed on it.", True),
    ("The dog's collar is red and it's sitting.", False),   # apostrophes are not quotes
    ("A white cube with two dark markings.", False),
])
def test_text_rule(text, want):
    assert has_text_cue(text) is want


def test_category_rules_in_order():
    rules = SelectionRules()
    dense = [D("flag", 12 * i + 5, 20, 12 * i + 10, 30) for i in range(7)] + [D("flag", 0, 40, 5, 50)]
    cs = select_candidates("i.jpg", 100, 100, dense, rules)
    inner, edge = cs[0], cs[-1]
    assert assign_category(inner, "A flag in a row of flags.", "appearance") == ("Spatial", "Counting")
    assert assign_category(edge, "A flag cut by the left edge.", None) == ("Limited", "Occlusion")
    assert assign_category(inner, "The flag with the number 7.", None) == ("Discriminative", "Text")  # Text first
    cups = select_candidates("i.jpg", 100, 100, [D("cup", 10 * i + 5, 5, 10 * i + 9, 9) for i in range(3)], rules)
    assert assign_category(cups[0], "A blue cup.", "Relationship") == ("Spatial", "Relationship")
    assert assign_category(cups[0], "A blue cup.", "component") == ("Discriminative", "Component")
    assert assign_category(cups[0], "A blue cup.", "nonsense") == ("Discriminative", "Appearance")
    small = select_candidates("hr.jpg", 8000, 5000, [D("kite", 5, 5, 30, 30)], rules, source="small")
    assert assign_category(small[0], "A kite with 2 tails.", None) == ("Limited", "Small")
