// Dutch names: romcal has no Dutch locale, so the Proper of Time, the solemnities and the
// vocabulary are the project's own Dutch, and other saints keep their English names.

const WEEKDAYS = ['zondag', 'maandag', 'dinsdag', 'woensdag', 'donderdag', 'vrijdag', 'zaterdag'];
const IDS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = { december: 'december', january: 'januari' };
const capital = (word) => word[0].toUpperCase() + word.slice(1);
const day = (id) => capital(WEEKDAYS[IDS.indexOf(id)]);

/** `[pattern, name]` for the ids of the Proper of Time. */
const PATTERNS = [
  [/^advent_(\d)_sunday$/, (m) => `${m[1]}e zondag van de Advent`],
  [/^advent_(\d)_(\w+)$/, (m) => `${day(m[2])} in de ${m[1]}e week van de Advent`],
  [/^advent_december_(\d+)$/, (m) => `${m[1]} ${MONTHS.december}`],
  [/^christmas_octave_day_(\d)$/, (m) => `${m[1]}e dag onder het octaaf van Kerstmis`],
  [/^christmas_time_january_(\d+)$/, (m) => `${m[1]} ${MONTHS.january}`],
  [/^(\w+)_after_epiphany$/, (m) => `${day(m[1])} na Driekoningen`],
  [/^ordinary_time_(\d+)_sunday$/, (m) => `${m[1]}e zondag door het jaar`],
  [/^ordinary_time_(\d+)_(\w+)$/, (m) => `${day(m[2])} in week ${m[1]} door het jaar`],
  [/^lent_(\d)_sunday$/, (m) => `${m[1]}e zondag van de Veertigdagentijd`],
  [/^lent_(\d)_(\w+)$/, (m) => `${day(m[2])} in de ${m[1]}e week van de Veertigdagentijd`],
  [/^(\w+)_after_ash_wednesday$/, (m) => `${day(m[1])} na Aswoensdag`],
  [/^holy_(monday|tuesday|wednesday)$/, (m) => `${day(m[1])} in de Goede Week`],
  [/^easter_time_(\d)_sunday$/, (m) => `${m[1]}e zondag van Pasen`],
  [/^easter_time_(\d)_(\w+)$/, (m) => `${day(m[2])} in de ${m[1]}e week van Pasen`],
  [/^easter_(monday|tuesday|wednesday|thursday|friday|saturday)$/, (m) => `${day(m[1])} onder het octaaf van Pasen`],
];

/** Celebrations named one by one. */
const NAMES = {
  nativity_of_the_lord: 'Geboorte van de Heer (Kerstmis)',
  holy_family_of_jesus_mary_and_joseph: 'Heilige Familie van Jezus, Maria en Jozef',
  mary_mother_of_god: 'Heilige Maria, Moeder van God',
  second_sunday_after_christmas: 'Tweede zondag na Kerstmis',
  epiphany_of_the_lord: 'Openbaring van de Heer (Driekoningen)',
  baptism_of_the_lord: 'Doop van de Heer',
  ash_wednesday: 'Aswoensdag',
  palm_sunday_of_the_passion_of_the_lord: 'Palmzondag van het lijden van de Heer',
  holy_thursday: 'Witte Donderdag',
  thursday_of_the_lords_supper: 'Witte Donderdag, Mis van het Laatste Avondmaal',
  friday_of_the_passion_of_the_lord: 'Goede Vrijdag',
  holy_saturday: 'Stille Zaterdag',
  easter_sunday: 'Paaszondag, Verrijzenis van de Heer',
  divine_mercy_sunday: 'Tweede zondag van Pasen (zondag van de Goddelijke Barmhartigheid)',
  ascension_of_the_lord: 'Hemelvaart van de Heer',
  pentecost_sunday: 'Pinksteren',
  most_holy_trinity: 'Heilige Drie-eenheid',
  most_holy_body_and_blood_of_christ: 'Heilig Sacrament van het Lichaam en Bloed van Christus (Sacramentsdag)',
  most_sacred_heart_of_jesus: 'Heilig Hart van Jezus',
  our_lord_jesus_christ_king_of_the_universe: 'Christus, Koning van het heelal',
  sunday_of_the_word_of_god: 'Zondag van het Woord van God',
  mary_mother_of_the_church: 'Heilige Maria, Moeder van de Kerk',
  joseph_spouse_of_mary: 'Heilige Jozef, bruidegom van de heilige Maagd Maria',
  annunciation_of_the_lord: 'Aankondiging van de Heer',
  nativity_of_john_the_baptist: 'Geboorte van de heilige Johannes de Doper',
  peter_and_paul_apostles: 'Heilige Petrus en Paulus, apostelen',
  transfiguration_of_the_lord: 'Gedaanteverandering van de Heer',
  assumption_of_the_blessed_virgin_mary: 'Maria Tenhemelopneming',
  exaltation_of_the_holy_cross: 'Kruisverheffing',
  all_saints: 'Allerheiligen',
  commemoration_of_all_the_faithful_departed: 'Allerzielen',
  dedication_of_the_lateran_basilica: 'Kerkwijding van de Lateraanse basiliek',
  immaculate_conception_of_the_blessed_virgin_mary: 'Onbevlekte Ontvangenis van de heilige Maagd Maria',
  presentation_of_the_lord: 'Opdracht van de Heer in de tempel (Maria-Lichtmis)',
  visitation_of_mary: 'Bezoek van Maria aan Elisabeth',
  'netherlands:willibrord_of_utrecht_bishop': 'Heilige Willibrord, bisschop, patroon van Nederland',
  'netherlands:saints_who_proclaimed_the_gospel_in_the_netherlands': 'Alle heiligen die in Nederland het evangelie hebben verkondigd',
  'netherlands:martyrs_of_gorkum': 'Heilige Nicolaas Pieck, priester, en gezellen, de Martelaren van Gorcum',
  'netherlands:titus_brandsma_priest': 'Heilige Titus Brandsma, priester en martelaar',
  'netherlands:lidwina_of_schiedam_virgin': 'Heilige Lidwina, maagd',
  'netherlands:peter_canisius_priest': 'Heilige Petrus Canisius, priester en kerkleraar',
  'netherlands:our_lord_jesus_christ_the_eternal_high_priest': 'Onze Heer Jezus Christus, eeuwige Hogepriester',
};

const VOCABULARY = {
  rank: { solemnity: 'hoogfeest', sunday: 'zondag', feast: 'feest', memorial: 'gedachtenis', optional_memorial: 'vrije gedachtenis', weekday: 'weekdag' },
  color: { black: 'zwart', green: 'groen', violet: 'paars', red: 'rood', rose: 'roze', white: 'wit' },
  season: { advent: 'Advent', christmas: 'Kersttijd', lent: 'Veertigdagentijd', paschal_triduum: 'Paastriduüm', easter: 'Paastijd', ordinary_time: 'Tijd door het jaar' },
};

/** The `@kind.key|word` lines and `id|name` lines of the Dutch file, for these celebration ids. */
export function dutch(ids) {
  const lines = [];
  for (const [kind, words] of Object.entries(VOCABULARY)) {
    for (const [key, word] of Object.entries(words)) lines.push(`@${kind}.${key}|${word}`);
  }
  WEEKDAYS.forEach((word, index) => lines.push(`@weekday.${index}|${word}`));
  const names = new Map(Object.entries(NAMES));
  for (const id of ids) {
    if (names.has(id)) continue;
    const found = PATTERNS.map(([pattern, name]) => [id.match(pattern), name]).find(([m]) => m);
    if (found) names.set(id, found[1](found[0]));
  }
  return [lines, [...names].map(([id, name]) => `${id}|${name}`).sort()];
}
