//! The word lists that say what a named thing is (see `entities`): nouns before a name, cloud
//! resource-name prefixes, deployment words, branch prefixes, slash pairs of prose, time zones,
//! currencies, time cues, compass words, capitalised words that are no people, and places.

use std::collections::HashSet;
use std::sync::OnceLock;

/// Places a time question names (`places.txt`: zone cities, countries, US states, big cities).
pub(super) const PLACES_TEXT: &str = include_str!("places.txt");

/// Nouns whose things are numbered (`issue 1290`, `PR 640`, `discussion 58`, `comment 55102`): a
/// number after one names a thing of that kind (as `#42` names an issue). Not `page` (`page 2` of
/// a listing) or `run` (`run 3 times`).
pub(super) const NUMBERED_KINDS: &[&str] = &[
    "issue",
    "ticket",
    "bug",
    "pr",
    "discussion",
    "comment",
    "job",
    "build",
    "milestone",
    "alert",
    "sprint",
    "epic",
    "story",
];

/// The [`NUMBERED_KINDS`] that a tracker files as issues.
pub(super) const ISSUE_NOUNS: &[&str] = &["issue", "ticket", "bug", "epic", "story"];

/// Words before a hyphenated or numbered name that say what it names (`vm web-01`, `vault kv-prod`,
/// `the new-checkout rollout`): the name's words are a name, not words of the ask.
pub(super) const TYPE_NOUNS: &[&str] = &[
    "account",
    "app",
    "branch",
    "bucket",
    "cluster",
    "container",
    "database",
    "db",
    "deployment",
    "disk",
    "env",
    "environment",
    "flag",
    "function",
    "group",
    "host",
    "index",
    "instance",
    "machine",
    "namespace",
    "node",
    "pipeline",
    "pod",
    "project",
    "queue",
    "registry",
    "repo",
    "repository",
    "rollout",
    "secret",
    "server",
    "service",
    "share",
    "site",
    "subscription",
    "table",
    "tenant",
    "topic",
    "vault",
    "vm",
    "vms",
    "volume",
    "workspace",
];

/// First parts of a hyphenated name that say what kind of cloud resource it names, as the
/// naming conventions cloud teams follow write them (`kv-shop-prod` a key vault, `rg-payments` a
/// resource group, `pg-analytics` a PostgreSQL server; Azure's Cloud Adoption Framework lists
/// these abbreviations): the abbreviation, then the word tools use for that kind of resource.
/// Only abbreviations that are not English words are here (not `app` or `web`).
pub(super) const RESOURCE_PREFIXES: &[(&str, &str)] = &[
    ("acr", "registry"),
    ("adx", "kusto"),
    ("aks", "kubernetes"),
    ("amlfs", "lustre"),
    ("amr", "redis"),
    ("appcs", "appconfig"),
    ("appi", "applicationinsights"),
    ("avd", "virtualdesktop"),
    ("cosmos", "cosmos"),
    ("cosno", "cosmos"),
    ("cr", "registry"),
    ("dd", "datadog"),
    ("dec", "kusto"),
    ("evh", "eventhubs"),
    ("evhns", "eventhubs"),
    ("evgd", "eventgrid"),
    ("evgt", "eventgrid"),
    ("fn", "functionapp"),
    ("fss", "storagesync"),
    ("func", "functionapp"),
    ("kv", "keyvault"),
    ("la", "workspace"),
    ("law", "workspace"),
    ("lfs", "lustre"),
    ("log", "workspace"),
    ("lt", "loadtesting"),
    ("mysql", "mysql"),
    ("ns", "namespace"),
    ("pg", "postgres"),
    ("psql", "postgres"),
    ("redis", "redis"),
    ("rg", "group"),
    ("sb", "servicebus"),
    ("sbns", "servicebus"),
    ("sf", "servicefabric"),
    ("sfc", "servicefabric"),
    ("sfmc", "servicefabric"),
    ("sigr", "signalr"),
    ("sql", "sql"),
    ("sqldb", "sql"),
    ("sqlsrv", "sql"),
    ("srch", "search"),
    ("sss", "storagesync"),
    ("st", "storage"),
    ("vdpool", "virtualdesktop"),
    ("vm", "vm"),
    ("vmss", "vmss"),
];

/// Parts of a hyphenated name that mark it as the name of a deployment (`kv-prod`, `rg-staging`).
pub(super) const ENV_WORDS: &[&str] = &[
    "demo",
    "dev",
    "preprod",
    "prod",
    "production",
    "qa",
    "sandbox",
    "stage",
    "staging",
    "stg",
    "test",
    "uat",
];

/// First parts of a branch name written with a slash (`hotfix/1.2`, `feature/login`).
pub(super) const BRANCH_PREFIXES: &[&str] = &[
    "bugfix", "chore", "dev", "develop", "feat", "feature", "fix", "hotfix", "main", "master", "origin",
    "refs", "release", "topic", "upstream", "wip",
];

/// Word pairs written with a slash in prose (`read/write`, `CI/CD`): not an `owner/repo`.
pub(super) const SLASH_WORDS: &[&str] = &[
    "add", "allow", "and", "cd", "ci", "client", "close", "create", "delete", "deny", "disable", "down",
    "enable", "fail", "false", "get", "in", "input", "io", "ip", "key", "max", "min", "no", "off", "on",
    "open", "or", "out", "output", "pass", "read", "remove", "server", "set", "start", "stop", "tcp", "true",
    "up", "value", "write", "yes",
];

/// Time zone abbreviations, written in capitals (`3pm PST`).
pub(super) const ZONE_ABBREVIATIONS: &[&str] = &[
    "ACST", "AEDT", "AEST", "AKST", "AST", "AWST", "BST", "CDT", "CEST", "CET", "CST", "EDT", "EEST", "EET",
    "EST", "GMT", "HKT", "HST", "IST", "JST", "KST", "MDT", "MSK", "MST", "NZDT", "NZST", "PDT", "PST",
    "SGT", "UTC", "WEST", "WET",
];

/// Currency codes (ISO 4217) of the most traded currencies, written in capitals (`hourly USD`).
pub(super) const CURRENCY_CODES: &[&str] = &[
    "AUD", "BRL", "CAD", "CHF", "CNY", "EUR", "GBP", "HKD", "INR", "JPY", "KRW", "MXN", "NOK", "NZD", "SEK",
    "SGD", "USD",
];

/// Words that make a question about the time: only with one of them (or a clock time or a zone)
/// does a place name a time zone ("is it morning in Sydney" does, "a VM in Sydney" does not).
pub(super) const TIME_CUES: &[&str] = &[
    "afternoon",
    "am",
    "awake",
    "clock",
    "daylight",
    "dst",
    "evening",
    "hour",
    "hours",
    "late",
    "local",
    "midnight",
    "morning",
    "night",
    "noon",
    "now",
    "offset",
    "pm",
    "time",
    "times",
    "timezone",
    "today",
    "tomorrow",
    "tonight",
    "tz",
    "yesterday",
];

/// Words after a place that make it a cloud region (`australia east`, `uk south`).
pub(super) const COMPASS: &[&str] =
    &["central", "east", "north", "northeast", "northwest", "south", "southeast", "southwest", "west"];

/// Capitalized words before `'s` that are not people (`What's`, `Today's`).
pub(super) const NOT_PEOPLE: &[&str] = &[
    "everybody",
    "everyone",
    "he",
    "here",
    "how",
    "it",
    "let",
    "nobody",
    "one",
    "she",
    "somebody",
    "someone",
    "that",
    "there",
    "today",
    "tomorrow",
    "tonight",
    "week",
    "what",
    "when",
    "where",
    "who",
    "yesterday",
];

pub(super) fn places() -> &'static HashSet<&'static str> {
    static PLACES: OnceLock<HashSet<&'static str>> = OnceLock::new();
    PLACES.get_or_init(|| {
        PLACES_TEXT.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
    })
}
