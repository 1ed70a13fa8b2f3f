"""The statistics of repeated rounds (bench/stats.py)."""

import unittest

import stats


class MedianAndSpread(unittest.TestCase):
    def test_median_of_an_odd_count_is_the_middle_value(self):
        self.assertEqual(stats.median([30, 10, 20]), 20)

    def test_median_of_an_even_count_is_the_mean_of_the_middle_two(self):
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)

    def test_median_of_nothing_is_an_error(self):
        with self.assertRaises(ValueError):
            stats.median([])

    def test_spread_is_max_minus_min_over_the_median(self):
        self.assertAlmostEqual(stats.spread([90, 100, 110]), 0.2)

    def test_spread_of_one_round_or_a_zero_median_is_zero(self):
        self.assertEqual(stats.spread([5]), 0.0)
        self.assertEqual(stats.spread([0, 0, 3]), 0.0)

    def test_one_outlier_moves_the_spread_not_the_median(self):
        values = [18_000, 18_600, 9_000]
        self.assertEqual(stats.median(values), 18_000)
        self.assertGreater(stats.spread(values), 0.5)


class Writing(unittest.TestCase):
    def test_a_figure_is_written_with_its_spread(self):
        self.assertEqual(stats.with_spread([18_000, 18_603, 19_500], lambda v: f"{v:,.0f}"),
                         "18,603 (8 %)")

    def test_span_is_low_to_high_or_one_value(self):
        self.assertEqual(stats.span([0.3, 1.7, 0.9]), "0.30–1.70")
        self.assertEqual(stats.span([0.5, 0.5]), "0.50")


if __name__ == "__main__":
    unittest.main()
