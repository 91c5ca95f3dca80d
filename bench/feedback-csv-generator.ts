/**
 * Deterministic synthetic feedback exports of any size, shaped like examples/feedback.csv
 * (feedback_id,date,channel,rating,plan,text; quoted text where it needs it, ~135 bytes a row):
 * a dozen recurring problems and praise written many ways, with devices, numbers and apps in
 * slots, so themes, sentiment and quotes behave as on a real export. The same (rows, seed) always
 * gives the same bytes. Written as a stream, so a million rows never sit in memory.
 *
 * CLI: node dist/bench/feedback-csv-generator.js <rows> [out.csv] [seed]  (default out: tmpdir)
 */
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { seededRandom } from '../src/plugins/shared/seeded-random.js';

const SLOTS: Record<string, string[]> = {
  phone: ['Pixel 7', 'iPhone 13', 'iPhone 15', 'Galaxy S22', 'OnePlus 11', 'iPad Air', 'Moto G', 'Xiaomi 13'],
  os: ['Android 14', 'iOS 18', 'iOS 17', 'Android 13', 'Windows 11', 'macOS Sonoma'],
  cal: ['Google Calendar', 'Outlook', 'Apple Calendar', 'the Exchange calendar'],
  tool: ['Trello', 'Asana', 'Todoist', 'Jira', 'Monday', 'a spreadsheet'],
  n: ['2', '3', '5', '10', '15', '40', '200', '500'],
  price: ['$8', '$10', '$12', '$15', '$20'],
  team: ['our team', 'my team', 'the marketing team', 'our support staff', 'the whole office', 'my family'],
  when: ['since the last update', 'this week', 'every morning', 'after the 4.2 release', 'for a month now', 'again today'],
  feature: ['the kanban board', 'the timeline view', 'quick-add', 'the reporting dashboard', 'recurring tasks', 'keyboard shortcuts', 'the iOS widget'],
};

interface Topic {
  weight: number;
  /** rating range [lo, hi] on 1–5 */
  rating: [number, number];
  lines: string[];
}

const TOPICS: Topic[] = [
  {
    weight: 14,
    rating: [1, 2],
    lines: [
      '{cal} sync has been broken {when}. Tasks I schedule never show up in my calendar.',
      'Calendar sync duplicated every recurring meeting, so each one shows up {n} times.',
      '{cal} sync pushes tasks to the wrong time zone, everything is off by {n} hours.',
      'Sync with {cal} stopped working {when} and there is no error shown.',
      'Calendar sync still fails half the time. We pay {price} a seat for this?',
    ],
  },
  {
    weight: 13,
    rating: [1, 2],
    lines: [
      'App crashes every time I open a task with an attachment on my {phone}.',
      'Crashes on startup {when}. {phone}, {os}. Reinstalled twice and it still closes.',
      'The app crashed {n} times during my standup. Not a good look.',
      'Keeps crashing when I upload a photo to a task on {os}.',
      'Crashes when I open the calendar tab on {os}, I lost what I typed.',
    ],
  },
  {
    weight: 11,
    rating: [1, 3],
    lines: [
      'The price went up from {price} to {price} per seat with two weeks notice. Too expensive for {team}.',
      'Pricing tiers feel designed to upsell. The one feature we need is on the Business plan.',
      'We were charged for {n} seats after removing users, billing did not prorate.',
      'Paying {price} a month is hard to justify for people who only comment twice a month.',
      'The renewal price is almost double what we signed up for. Feels like bait and switch.',
    ],
  },
  {
    weight: 9,
    rating: [2, 3],
    lines: [
      'Boards with more than {n} tasks take forever to load. Scrolling the list view lags badly.',
      'Everything feels slow {when}. Opening a project takes {n} seconds.',
      'The dashboard takes over {n} seconds to load with our projects. It used to be instant.',
      'Performance is terrible {when}, every click takes a couple of seconds.',
    ],
  },
  {
    weight: 8,
    rating: [2, 3],
    lines: [
      'Onboarding was confusing. I invited {team} before setting up projects and everyone landed on an empty screen.',
      'The tutorial skipped how to set up recurring tasks, I had to search the help center.',
      'I do not understand the difference between spaces, projects and lists. The onboarding should explain it.',
      'The setup wizard asks too many questions up front. I just wanted to create a list.',
    ],
  },
  {
    weight: 7,
    rating: [1, 3],
    lines: [
      'Notifications arrive hours late on {os}. A reminder for a 9am meeting showed up at 11.',
      'Notifications are overwhelming, I get an email for every single comment even after turning them off.',
      'Push notifications stopped {when} on my {phone}.',
    ],
  },
  {
    weight: 6,
    rating: [2, 3],
    lines: [
      'Search is slow and does not find tasks by comment text. We scroll to find old discussions.',
      'Search does not find tasks by tag, very frustrating for {team}.',
      'Search results are irrelevant {when}, the task I want is never on the first page.',
    ],
  },
  {
    weight: 5,
    rating: [1, 2],
    lines: [
      'Importing from {tool} lost all our checklists and labels. We redid the migration by hand.',
      'The import from {tool} did not bring over subtasks or due dates.',
      'Offline edits never synced when I got back online, I lost an hour of notes. Data loss is a deal breaker.',
    ],
  },
  {
    weight: 9,
    rating: [4, 5],
    lines: [
      'Love {feature}. It finally feels smooth and {team} uses it every day.',
      'Really like how fast {feature} is. Best to-do app I have used.',
      '{feature} is exactly what {team} needed. Great work!',
      'Switched from {tool} last month and not looking back, {feature} is brilliant.',
    ],
  },
  {
    weight: 6,
    rating: [4, 5],
    lines: [
      'Support was fantastic. They walked us through the SSO setup on a call, thank you!',
      'Shout out to the support team for fixing our issue on a Sunday!',
      'Support answered within an hour and solved my problem, great service.',
    ],
  },
  {
    weight: 4,
    rating: [3, 4],
    lines: [
      'Would love a dark mode for the desktop app. Staring at white screens all day hurts.',
      'Please add natural language dates to quick-add, it would be perfect.',
      'Could you add a shortcut for moving a task to another project?',
    ],
  },
  {
    weight: 3,
    rating: [3, 5],
    lines: [
      'Good product overall, {feature} gives our managers what they need.',
      'Simple, fast, and free for my personal lists.',
      'Nice update, the new filters are handy.',
    ],
  },
];
const OPENERS = ['', '', '', '', 'Honestly, ', 'Hi team, ', 'FYI: ', 'Ugh. ', 'Quick note: '];
const CLOSERS = ['', '', '', '', ' Please fix.', ' Thanks.', ' Any update on this?', ' We are evaluating alternatives.'];
const CHANNELS = ['app_store', 'play_store', 'in_app', 'email', 'survey', 'support_ticket', 'twitter'];
const PLANS = ['Free', 'Pro', 'Team', 'Business'];
const TOTAL_WEIGHT = TOPICS.reduce((s, t) => s + t.weight, 0);

function pick<T>(xs: readonly T[], r: () => number): T {
  return xs[Math.floor(r() * xs.length)];
}

function topicOf(r: () => number): Topic {
  let x = r() * TOTAL_WEIGHT;
  for (const t of TOPICS) if ((x -= t.weight) < 0) return t;
  return TOPICS[TOPICS.length - 1];
}

/** CSV field: quoted when it holds a delimiter, a quote or a line break. */
function field(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Row i of the export (1-based ids FB-100001 …), deterministic given the generator state. */
function row(i: number, r: () => number): string {
  const t = topicOf(r);
  const text = `${pick(OPENERS, r)}${pick(t.lines, r).replace(/\{(\w+)\}/g, (_, k: string) => pick(SLOTS[k], r))}${pick(CLOSERS, r)}`;
  const rating = t.rating[0] + Math.floor(r() * (t.rating[1] - t.rating[0] + 1));
  const day = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 500) * 86_400_000).toISOString().slice(0, 10);
  // a few rows without a rating or channel, as real exports have
  const noRating = r() < 0.04;
  return [`FB-${100_000 + i + 1}`, day, r() < 0.03 ? '' : pick(CHANNELS, r), noRating ? '' : String(rating), pick(PLANS, r), field(text)].join(',');
}

/** Writes `rows` data rows to `path`; resolves with the file's size in bytes. */
export async function writeFeedbackCsv(path: string, rows: number, seed = 14): Promise<number> {
  const r = seededRandom(seed);
  const out = createWriteStream(path);
  let bytes = 0;
  const write = (s: string): Promise<void> | void => {
    bytes += Buffer.byteLength(s);
    if (!out.write(s)) return new Promise((ok) => out.once('drain', ok));
  };
  await write('feedback_id,date,channel,rating,plan,text\n');
  let chunk: string[] = [];
  for (let i = 0; i < rows; i++) {
    chunk.push(row(i, r));
    if (chunk.length === 2000 || i === rows - 1) {
      await write(`${chunk.join('\n')}\n`);
      chunk = [];
    }
  }
  await new Promise<void>((ok, fail) => out.end((e?: Error | null) => (e ? fail(e) : ok())));
  return bytes;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const rows = Number(process.argv[2]);
  if (!Number.isInteger(rows) || rows < 1) {
    process.stderr.write('usage: feedback-csv-generator <rows> [out.csv] [seed]\n');
    process.exit(2);
  }
  const out = process.argv[3] ?? join(tmpdir(), `runtrail-feedback-${rows}.csv`);
  const bytes = await writeFeedbackCsv(out, rows, process.argv[4] ? Number(process.argv[4]) : undefined);
  process.stdout.write(`${out} ${rows} rows ${bytes} bytes\n`);
}
