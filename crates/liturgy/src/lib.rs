//! The liturgical calendar of the Roman Rite (1969): dates, celebrations, precedence, lectionary.
