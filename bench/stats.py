"""The figures of repeated rounds: each figure is the median of its rounds, written with its
run-to-run spread, (max − min) / median, so a reader sees at once how far one round can be
from another."""

MIN_ROUNDS = 3


def median(values):
    """The middle value (the mean of the two middle ones for an even count)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def spread(values):
    """(max − min) / median, as a fraction (0.08 for 8 %); 0 for a single value or a zero
    median."""
    centre = median(values)
    if centre == 0:
        return 0.0
    return (max(values) - min(values)) / abs(centre)


def with_spread(values, fmt):
    """The median written with `fmt`, then the spread in parentheses: `18,603 (8 %)`."""
    return f"{fmt(median(values))} ({spread(values) * 100:.0f} %)"


def span(values, fmt=lambda v: f"{v:.2f}"):
    """`low–high` of the values (one value when they are all the same)."""
    low, high = min(values), max(values)
    return fmt(low) if fmt(low) == fmt(high) else f"{fmt(low)}–{fmt(high)}"
