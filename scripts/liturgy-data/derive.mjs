// Derives the project's national calendars and localised names from romcal's packages.
//
// romcal (https://github.com/romcal/romcal) and its calendar packages are MIT-licensed,
// Copyright (c) 2018 Julian Pereira; the notice is repeated in every file written here.
// Run through `./derive`, which installs the exact versions pinned in package.json.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Romcal from 'romcal';
import { dutch } from './dutch.mjs';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const data = join(here, '..', '..', 'crates', 'liturgy', 'data');
const check = process.argv.includes('--check');

/** Project id → [romcal package, bishops' conference choices for Epiphany, Ascension, Corpus Christi]. */
const CALENDARS = [
  ['americas', 'americas', null],
  ['europe', 'europe', null],
  ['united-states', 'united-states', [true, true, true]],
  ['canada', 'canada', [true, true, true]],
  ['england-and-wales', 'england', [true, true, true]],
  ['ireland', 'ireland', [false, true, true]],
  ['australia', 'australia', [true, true, true]],
  ['brazil', 'brazil', [true, true, false]],
  ['portugal', 'portugal', [true, true, false]],
  ['poland', 'poland', [false, true, false]],
  ['france', 'france', [true, false, true]],
  ['belgium', 'belgium', [true, false, true]],
  ['netherlands', 'netherlands', [true, false, true]],
  ['germany', 'germany', [false, false, false]],
  ['austria', 'austria', [false, false, false]],
  ['switzerland', 'switzerland', [false, false, false]],
];

/**
 * Entries romcal's packages lack, from the national decrees as the LiturgicalCalendarAPI
 * (Apache-2.0) records them; docs/calendars.md gives the source of each. Same line format.
 */
const CORRECTIONS = {
  'united-states': [
    '01-22/sun+1|day_of_prayer_for_the_legal_protection_of_unborn_children|proper_memorial|violet|2011-|Day of Prayer for the Legal Protection of Unborn Children',
    '11-thu-4|thanksgiving_day|proper_memorial|white|1970-|Thanksgiving Day',
  ],
  switzerland: [
    '09-25|nicholas_of_flue_hermit|proper_solemnity|white|1970-|Saint Nicholas of Flüe, Hermit, Patron of Switzerland',
  ],
  netherlands: [
    '06-04|lidwina_of_schiedam_virgin|proper_feast|white|1979-|Saint Lidwina, Virgin',
    '07-09|martyrs_of_gorkum|proper_feast|red|1979-|Saint Nicholas Pieck, Priest, and Companions, the Martyrs of Gorkum',
    '07-27|titus_brandsma_priest|proper_memorial|red|1979-|Saint Titus Brandsma, Priest and Martyr',
    '11-06|saints_who_proclaimed_the_gospel_in_the_netherlands|proper_feast|white|1979-|All Saints who Proclaimed the Gospel in the Netherlands',
    '11-07|willibrord_of_utrecht_bishop|proper_solemnity|white|1979-|Saint Willibrord, Bishop, Patron of the Netherlands',
    '12-21|peter_canisius_priest|memorial|white|1979-|Saint Peter Canisius, Priest and Doctor of the Church',
  ],
};

/** Project language → romcal locale. */
const LANGUAGES = [['la', 'la'], ['pt', 'pt-br'], ['pl', 'pl'], ['fr', 'fr'], ['de', 'de'], ['es', 'es'], ['it', 'it']];

const LICENSE = `# Derived by scripts/liturgy-data/derive from romcal's packages (see scripts/liturgy-data/package.json).
# romcal: MIT License, Copyright (c) 2018 Julian Pereira. Permission is hereby granted, free of
# charge, to any person obtaining a copy of this software and associated documentation files, to
# deal in the Software without restriction, subject to the inclusion of the copyright notice and
# this permission notice; THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
# Do not edit by hand: change the script and run it again.`;

/** romcal's export suffix of a locale: `pt-br` → `PtBr`. */
const suffix = (locale) => locale.split('-').map((p) => p[0].toUpperCase() + p.slice(1)).join('');
const bundle = (pkg, locale) => {
  const exports = require(`@romcal/calendar.${pkg}`);
  const found = Object.entries(exports).find(([name]) => name.endsWith(`_${suffix(locale)}`));
  if (!found) throw new Error(`@romcal/calendar.${pkg} has no locale ${locale}`);
  return found[1];
};

/** The general date of an entry that romcal defines by a date function. */
const DATE_FUNCTIONS = {
  immaculateConceptionOfMary: '12-08',
  peterAndPaulApostles: '06-29',
  assumption: '08-15',
  allSaints: '11-01',
  maryMotherOfTheChurch: 'monday_after_pentecost',
};
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const pad = (n) => String(n).padStart(2, '0');

function dateField(def, exceptions) {
  let date;
  if (def.dateFn === 'pentecostSunday') date = `easter+${49 + (def.addDay ?? 0)}`;
  else if (def.dateFn) date = DATE_FUNCTIONS[def.dateFn];
  else if (def.nthWeekInMonth) date = `${pad(def.month)}-${WEEKDAYS[def.dayOfWeek]}-${def.nthWeekInMonth}`;
  else if (def.date) date = `${pad(def.month)}-${pad(def.date)}`;
  if (!date) throw new Error(`unsupported date ${JSON.stringify(def)}`);
  // Moves to the Sunday by day of week (England and Wales); a move out of the Easter Octave is
  // what the general rules of transfer already do, so it is not repeated here.
  for (const exception of [exceptions ?? []].flat()) {
    if (exception.ifIsDayOfWeek === undefined) continue;
    const shift = exception.setDate.addDay ?? -exception.setDate.subtractDay;
    date += `/${WEEKDAYS[exception.ifIsDayOfWeek]}${shift > 0 ? '+' : ''}${shift}`;
  }
  return date;
}

function rankField(precedence) {
  const table = [
    [/^PROPER_SOLEMNITY/, 'proper_solemnity'],
    [/SOLEMNITY/, 'solemnity'],
    [/^PROPER_FEAST/, 'proper_feast'],
    [/LORD_FEAST/, 'feast_of_the_lord'],
    [/FEAST/, 'feast'],
    [/^PROPER_MEMORIAL/, 'proper_memorial'],
    [/^OPTIONAL_MEMORIAL/, 'optional_memorial'],
    [/MEMORIAL/, 'memorial'],
  ];
  const found = table.find(([pattern]) => pattern.test(precedence));
  if (!found) throw new Error(`unsupported precedence ${precedence}`);
  return found[1];
}

function colorField(entry, id, name) {
  const color = [entry.colors ?? []].flat()[0];
  if (color) return color === 'PURPLE' ? 'violet' : color.toLowerCase();
  const titles = JSON.stringify(entry.titles ?? '');
  return /MARTYR/.test(titles) || /martyr/.test(id) || /Martyr/.test(name) ? 'red' : 'white';
}

/** The lines of the general calendar file, by id, for the years an override keeps. */
const general = new Map(
  readFileSync(join(data, 'sanctorale.txt'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => line.split('|').map((f) => f.trim()))
    .map((fields) => [fields[1], fields]),
);

const written = new Map();
const out = (path, text) => written.set(path, text.endsWith('\n') ? text : `${text}\n`);

/** National names, per language: `calendar:id` → name. */
const nationalNames = new Map(LANGUAGES.map(([lang]) => [lang, new Map()]));

for (const [id, pkg, options] of CALENDARS) {
  const english = bundle(pkg, 'en');
  const own = english.calendarName;
  const parents = new Set();
  const lines = [];
  for (const [key, defs] of Object.entries(english.inputs)) {
    defs.forEach((d) => !['general_roman', 'ProperOfTime', own].includes(d.fromCalendarId) && parents.add(d.fromCalendarId));
    const mine = defs.filter((d) => d.fromCalendarId === own);
    if (!mine.length) continue;
    const merged = Object.assign({}, ...defs);
    const changes = mine.some((d) => d.dateDef || d.precedence || d.customLocaleId || d.dateExceptions);
    // Optional local solemnities (the dedication of churches whose date is unknown) belong to
    // each church, not to the national calendar; entries of the Proper of Time only gain a
    // holy-day flag.
    if (!changes || merged.isOptional || merged.properCycle === 'PROPER_OF_TIME' && !merged.dateDef?.dateFn?.startsWith('pentecost') && !general.has(key)) continue;
    if (merged.precedence?.startsWith('WEEKDAY') || merged.precedence === 'PROPER_OF_TIME_SOLEMNITY_2' && !general.has(key)) continue;
    const nameKey = merged.customLocaleId ?? key;
    const name = english.i18n.names[nameKey] ?? english.i18n.names[key];
    if (!name) throw new Error(`${id}: no English name for ${key}`);
    const years = general.get(key)?.[4] ?? '1970-';
    // A patron already ranked so in the General Calendar keeps its higher place in the table.
    const proper = rankField(merged.precedence);
    const rank = general.get(key)?.[2] === proper.replace(/^proper_/, '') ? general.get(key)[2] : proper;
    lines.push([dateField(merged.dateDef, merged.dateExceptions), key, rank, colorField(merged, key, name), years, name].join('|'));
    for (const [lang, locale] of LANGUAGES) {
      const localised = bundle(pkg, locale).i18n.names;
      const value = localised[nameKey] ?? localised[key];
      if (value && value !== name) nationalNames.get(lang).set(`${id}:${key}`, value);
    }
  }
  const parentIds = [...parents].map((p) => CALENDARS.find(([, pkg2]) => bundle(pkg2, 'en').calendarName === p)?.[0]);
  if (parentIds.some((p) => !p)) throw new Error(`${id}: unknown parent calendar in ${[...parents]}`);
  for (const line of CORRECTIONS[id] ?? []) {
    const key = line.split('|')[1];
    const at = lines.findIndex((l) => l.split('|')[1] === key);
    if (at >= 0) lines.splice(at, 1);
    lines.push(line);
  }
  lines.sort();
  const header = [
    LICENSE,
    `# Proper calendar \`${id}\` (romcal \`${own}\`): the entries it adds to or changes in the calendars it inherits.`,
    '# Same line format as sanctorale.txt, with the proper ranks and the movable dates of docs/calendars.md.',
  ];
  if (parentIds.length) header.push(`@inherits ${parentIds.join(' ')}`);
  if (options) {
    const [e, a, c] = options;
    header.push(`@options epiphany_on_sunday=${e} ascension_on_sunday=${a} corpus_christi_on_sunday=${c}`);
  }
  mkdirSync(join(data, 'calendars'), { recursive: true });
  out(join(data, 'calendars', `${id}.txt`), [...header, ...lines].join('\n'));
}

const VOCABULARY_SEASONS = {
  advent: 'advent', christmas_time: 'christmas', lent: 'lent',
  paschal_triduum: 'paschal_triduum', easter_time: 'easter', ordinary_time: 'ordinary_time',
};

/** Every celebration id romcal names, for the Dutch file. */
const temporalIds = new Set();

for (const [lang, locale] of LANGUAGES) {
  const localized = bundle('general-roman', locale);
  const englishNames = bundle('general-roman', 'en').i18n.names;
  const names = new Map();
  for (const [key, value] of Object.entries(localized.i18n.names)) {
    if (value !== englishNames[key] || lang === 'la') names.set(key, value);
  }
  // The Proper of Time: every id the calendar produces, named by romcal itself.
  const english = new Map();
  for (const onSunday of [false, true]) {
    for (let year = 2020; year <= 2047; year++) {
      const config = { scope: 'gregorian', epiphanyOnSunday: onSunday, ascensionOnSunday: onSunday, corpusChristiOnSunday: onSunday };
      const days = await new Romcal({ ...config, localizedCalendar: localized }).generateCalendar(year);
      for (const celebrations of Object.values(days)) {
        for (const c of celebrations) if (!names.has(c.id)) names.set(c.id, c.name);
      }
    }
  }
  const i18n = localized.i18n;
  const vocabulary = [];
  for (const [rank, value] of Object.entries(i18n.ranks)) vocabulary.push(`@rank.${rank}|${value}`);
  for (const [color, value] of Object.entries(i18n.colors)) {
    if (color !== 'gold') vocabulary.push(`@color.${color === 'purple' ? 'violet' : color}|${value}`);
  }
  for (const [season, ours] of Object.entries(VOCABULARY_SEASONS)) vocabulary.push(`@season.${ours}|${i18n.seasons[season].season}`);
  for (const [day, value] of Object.entries(i18n.weekdays)) vocabulary.push(`@weekday.${day}|${value}`);
  const entries = [...names, ...nationalNames.get(lang)]
    .map(([key, value]) => `${key}|${value.replace(/\s+/g, ' ').trim()}`)
    .sort();
  for (const id of names.keys()) temporalIds.add(id);
  mkdirSync(join(data, 'names'), { recursive: true });
  out(join(data, 'names', `${lang}.txt`), [
    LICENSE,
    `# Names in \`${lang}\` (romcal locale \`${locale}\`): \`@kind.key|word\` for ranks, colours, seasons`,
    '# and weekdays (0 is Sunday); `id|name` for celebrations of the General Roman Calendar;',
    '# `calendar:id|name` for those of a proper calendar.',
    ...vocabulary,
    ...entries,
  ].join('\n'));
}

{
  const [vocabulary, entries] = dutch(temporalIds);
  out(join(data, 'names', 'nl.txt'), [
    '# Names in `nl`: the project\'s own Dutch (scripts/liturgy-data/dutch.mjs), for the Proper of',
    '# Time, the solemnities and feasts of the Lord, and the proper calendar of the Netherlands;',
    '# other celebrations keep their English names. Same format as the other files.',
    ...vocabulary,
    ...entries,
  ].join('\n'));
}

let stale = 0;
for (const [path, text] of written) {
  let current = '';
  try { current = readFileSync(path, 'utf8'); } catch { /* a new file */ }
  if (current === text) continue;
  if (check) { console.error(`stale: ${path}`); stale++; } else writeFileSync(path, text);
}
if (stale) process.exit(1);
console.log(`${written.size} files ${check ? 'checked' : 'written'}`);
