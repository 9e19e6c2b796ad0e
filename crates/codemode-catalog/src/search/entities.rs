//! What a query names by its form, and how it is written: files, patterns, addresses, channels,
//! handles, issue keys, paths, repositories, branches, commits, clock times, time zones, places,
//! people by a possessive, and names of things (`web-01`, `kv-prod`) whose words are not words of
//! the ask.

use super::MAX_QUERY_TERMS;
use super::forms::{
    QUERY_LANGUAGES, atlassian_id_kind, chat_id_kind, cloud_host_kind, github_node_kinds, is_advisory_id,
    is_clock_time, is_commit_hash, is_config_key, is_duration, is_email, is_emoji_code, is_file_name,
    is_hex_color, is_ip_address, is_iso_date, is_key_chord, is_key_name, is_phone_number, is_screen_size,
    is_search_qualifier, is_setting_name, media_kind, query_language,
};
use super::name_words::{
    BRANCH_PREFIXES, COMPASS, CURRENCY_CODES, ENV_WORDS, ISSUE_NOUNS, NOT_PEOPLE, NUMBERED_KINDS,
    RESOURCE_PREFIXES, SLASH_WORDS, TIME_CUES, TYPE_NOUNS, ZONE_ABBREVIATIONS, places,
};
use super::spans::{arithmetic, quoted_spans, time_spent, workflow_status};

/// What a query names by its form, found once per query: each chunk with what it is and how it
/// is written ([`for_each_entity`]).
pub(super) struct Named<'a> {
    query: &'a str,
    things: Vec<(&'a str, &'static str, &'static str)>,
}

impl<'a> Named<'a> {
    /// The things `query` names. `known(word)` says whether the catalog knows a word: a
    /// possessive of a known word names a product (`GitHub's`), not a person.
    pub(super) fn find(query: &'a str, known: &dyn Fn(&str) -> bool) -> Named<'a> {
        let mut things = Vec::new();
        for_each_entity(query, known, |chunk, kind, shape| things.push((chunk, kind, shape)));
        Named { query, things }
    }

    /// What the named things are, each once, in order: `notes.txt` or `docker/Dockerfile` a file
    /// (and `cover.png` an image, `talk.mp3` audio, `logs.tgz` an archive), a wildcard pattern
    /// (`*.log`) a pattern, an address (`https://...`, `www.`, `example.com`) a URL, `#name` a channel, `@name` a user,
    /// `#42` or a key like `OPS-7` an issue, a number after a noun of numbered things (`PR 42`,
    /// `discussion 58`) one of them, `~/src` or `./out` a directory, `/var/log` a path,
    /// `owner/repo` a repository, `hotfix/1.2` a branch, `abc1234` a commit, `3pm` or `15:30` a
    /// time, `PST` or (in a question about the time) `Sydney` a time zone, `Dana's` a user,
    /// `:tada:` a reaction, `+4915112345678` a phone, a chat id (`U024BE7LH`) a user or channel,
    /// a GitHub node id (`PRRT_kwDO...`) what its prefix says, `customfield_10016` a field,
    /// `att44556` an attachment, `Escape` (not opening a sentence) or `ctrl+k` a key, `Done` or
    /// `In Review` a status, `1280x720` a width and a height, `#d73a4a` a colour,
    /// `Checkout:RetryCount` a setting, and `2 plus 3` a sum.
    pub(super) fn kinds(&self) -> Vec<&'static str> {
        let mut kinds = self.distinct(|kind, _| kind);
        // Three things of one kind (`a.json, b.json, c.json`) ask for a tool that takes many
        // (two are as often a link or a move between them).
        if kinds.iter().any(|k| self.things.iter().filter(|t| t.1 == *k).count() >= 3) {
            kinds.push("multiple");
        }
        kinds
    }

    /// How the named things are written ([`shape_terms`]), each once, in order.
    pub(super) fn shapes(&self) -> Vec<&'static str> {
        self.distinct(|_, shape| shape)
    }

    /// What `pick` takes of each named thing (its kind or its shape), each once, in order.
    fn distinct(&self, pick: fn(&'static str, &'static str) -> &'static str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for &(_, kind, shape) in &self.things {
            let w = pick(kind, shape);
            if !w.is_empty() && !out.contains(&w) {
                out.push(w);
            }
        }
        out
    }

    /// The query without the things it names by their form ([`Named::kinds`]) and without names
    /// (`web-01` in `vm web-01`, `500` in `max_connections=500`): their letters (`notes` of
    /// `notes.txt`, `general` of `#general`, `ops` of `OPS-7`, `web` of `web-01`) are names, not
    /// words of the ask. The query itself when nothing else is left.
    pub(super) fn stripped(&self) -> std::borrow::Cow<'a, str> {
        let quoted = quoted_spans(self.query);
        if self.things.is_empty() && quoted.is_empty() {
            return std::borrow::Cow::Borrowed(self.query);
        }
        let mut text = self.query.to_owned();
        for &(chunk, _, _) in &self.things {
            if let Some(at) = text.find(chunk) {
                text.replace_range(at..at + chunk.len(), &" ".repeat(chunk.len()));
            }
        }
        // A quoted value (`'fixed in 2.3'`, `"Q3 Plan"`, `'support-bot'`, `'fix null check'`) is a
        // title, message or name to use. One or two plain lower-case words (`'request changes'`,
        // `'pending'`) may be a value the tools name, and stay.
        for (start, end) in quoted {
            let inner = &self.query[start + 1..end - 1];
            let plain = inner.split_whitespace().count() <= 2
                && inner.chars().all(|c| c.is_ascii_lowercase() || c == ' ');
            if !plain {
                text.replace_range(start..end, &" ".repeat(end - start));
            }
        }
        // With nothing else left, a query in a query language (a JQL filter) searches what it
        // is; one of other named things (`release-notes.md`) its own words.
        if text.bytes().any(|b| b.is_ascii_alphanumeric())
            || self.things.iter().any(|t| QUERY_LANGUAGES.contains(&t.1))
        {
            std::borrow::Cow::Owned(text)
        } else {
            std::borrow::Cow::Borrowed(self.query)
        }
    }
}

/// The term of a written form (`=key` for `OPS-7`): not a word, so no text's words make it.
pub(super) fn shape_term(shape: &str) -> String {
    format!("={shape}")
}

/// Whether a term is a [`shape_term`].
pub(super) fn is_shape_term(term: &str) -> bool {
    term.starts_with('=')
}

/// The written forms a text shows, as [`shape_term`]s, each once: an entry whose description or
/// parameter docs give an example of a form (`e.g. 'PROJ-123'`) takes values written that way,
/// so a query naming a thing in that form (`OPS-7`) points to it.
///
/// File names and host names are left out: in prose, most chunks of that form are abbreviations
/// and product names (`e.g.`, `Node.js`), not examples of a value.
pub(super) fn shape_terms(text: &str) -> Vec<String> {
    let mut out: Vec<&'static str> = Vec::new();
    // Every indexed form has one of these bytes (`-` of a key, `:` of a URL, `#`, `@`), `www.`,
    // or is a duration (`1h`); only such chunks are looked at, the whole text through.
    let candidate = |chunk: &&str| {
        chunk.bytes().any(|b| matches!(b, b'-' | b':' | b'#' | b'@'))
            || chunk.contains("www.")
            || is_duration(chunk.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
    };
    for chunk in text.split_whitespace().filter(candidate) {
        for_each_entity(chunk, &|_| true, |_, _, shape| {
            if !matches!(shape, "" | "file" | "host") && !out.contains(&shape) {
                out.push(shape);
            }
        });
    }
    out.into_iter().map(shape_term).collect()
}

/// Calls `f(chunk, kind, shape)` for each whitespace-separated chunk of the query (trimmed of
/// punctuation) that names a thing by its form: `kind` what the thing is, `shape` how it is
/// written (`#42` and `OPS-7` are both issues, written `number` and `key`). An empty `kind` is a
/// name of something the query says otherwise (`web-01`); an empty `shape` is a form tool text is
/// not searched for. Places are looked for across chunks (`new york`).
fn for_each_entity<'a>(
    query: &'a str,
    known: &dyn Fn(&str) -> bool,
    mut f: impl FnMut(&'a str, &'static str, &'static str),
) {
    let chunks: Vec<&'a str> = query
        .split_whitespace()
        .take(MAX_QUERY_TERMS * 2)
        .map(|chunk| {
            // An emoji shortcode keeps its colons (`:tada:`); other chunks lose them.
            let outer = chunk.trim_matches(|c: char| "\"'`()[]{}<>,;!?".contains(c)).trim_end_matches('.');
            if is_emoji_code(outer) {
                outer
            } else {
                chunk.trim_matches(|c: char| "\"'`()[]{}<>,;:!?".contains(c)).trim_end_matches('.')
            }
        })
        .collect();
    let raw: Vec<&str> = query.split_whitespace().take(chunks.len()).collect();
    let lower: Vec<String> = chunks.iter().map(|c| c.to_ascii_lowercase()).collect();
    let mut timed = false;
    let language = query_language(&chunks, &lower);
    for (i, &chunk) in chunks.iter().enumerate() {
        let mut push = |chunk: &'a str, w: &'static str, shape: &'static str| f(chunk, w, shape);
        if let Some((start, kind)) = language
            && i >= start
        {
            // The query's text in a query language names what it searches for.
            push(chunk, if i == start { kind } else { "" }, "");
            continue;
        }
        if let Some(kind) = workflow_status(&chunks, i).or_else(|| arithmetic(&lower, i)) {
            push(chunk, kind, "");
            continue;
        }
        if is_search_qualifier(&lower[i]) {
            push(chunk, "search", "");
            continue;
        }
        if is_advisory_id(&lower[i]) {
            push(chunk, "advisory", "");
            continue;
        }
        if is_email(chunk) {
            push(chunk, "user", "");
            push(chunk, "email", "");
            continue;
        }
        if is_iso_date(chunk) {
            push(chunk, "date", "");
            continue;
        }
        if is_ip_address(chunk) {
            push(chunk, "ip", "");
            continue;
        }
        if let Some(kind) = cloud_host_kind(&lower[i]) {
            // `myregistry.azurecr.io` names a resource, not a page to fetch.
            push(chunk, kind, "");
            continue;
        }
        let starts = |prefix: &str| chunk.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix));
        if is_emoji_code(chunk) {
            // `:tada:` names an emoji, which a message or comment gets as a reaction.
            push(chunk, "reaction", "");
            continue;
        }
        if let Some(kinds) = github_node_kinds(chunk) {
            for kind in kinds {
                push(chunk, kind, "");
            }
            continue;
        }
        if let Some(kind) = atlassian_id_kind(chunk) {
            push(chunk, kind, "");
            continue;
        }
        // A capitalised key name that opens the query or a sentence of it is its verb (`Enter
        // the email ...`, `The page is loaded. Enter the details ...`).
        let opens_sentence = i == 0 || raw[i - 1].ends_with(['.', '!', '?']);
        if is_key_chord(&lower[i]) || (!opens_sentence && is_key_name(chunk)) {
            // `ctrl+shift+p`, `cmd-k`: a key combination, which is pressed.
            push(chunk, "key", "");
            continue;
        }
        if is_phone_number(chunk, chunks.get(i + 1).copied()) {
            push(chunk, "phone", "");
            continue;
        }
        // `20% of users`, `20% to v2`: a share of an audience, which a rollout serves (not `CPU
        // over 80%`).
        if chunk.strip_suffix('%').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            && matches!(chunks.get(i + 1).copied(), Some("of" | "to"))
        {
            push(chunk, "rollout", "");
            continue;
        }
        // `1280x720`, `1280 by 720`, `390 wide`: a size on screen, which a width and a height set.
        if is_screen_size(&lower[i..]) {
            push(chunk, "width", "");
            push(chunk, "height", "");
            continue;
        }
        if let Some(kind) = chat_id_kind(chunk) {
            // `U024BE7LH`, `C07INCID`: Slack writes its ids so.
            push(chunk, kind, "");
            push(chunk, "slack", "");
            continue;
        }
        if starts("http://") || starts("https://") || starts("www.") {
            push(chunk, "url", "url");
            continue;
        }
        if is_hex_color(chunk) {
            push(chunk, "color", "");
            continue;
        }
        // `issue 1290`, `PR #640`: a number after a noun of numbered things names one of them
        // (`epic #12` is an issue, as any `#42`).
        let number = chunk.strip_prefix('#').unwrap_or(chunk);
        let numbered = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
        if numbered
            && let Some(&kind) =
                i.checked_sub(1).and_then(|j| NUMBERED_KINDS.iter().find(|k| **k == lower[j]))
        {
            let issue = chunk.starts_with('#') && ISSUE_NOUNS.contains(&kind);
            push(chunk, if issue { "issue" } else { kind }, "number");
            continue;
        }
        if let Some(rest) = chunk.strip_prefix('#') {
            if numbered {
                push(chunk, "issue", "number");
            } else if rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) {
                push(chunk, "channel", "channel");
            }
            continue;
        }
        if chunk
            .strip_prefix('@')
            .is_some_and(|rest| rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()))
        {
            push(chunk, "user", "handle");
            continue;
        }
        if let Some((key, number)) = chunk.split_once('-')
            && key.len() >= 2
            && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && key.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
        {
            push(chunk, "issue", "key");
            continue;
        }
        if chunk.contains('*') && chunk.bytes().any(|b| b.is_ascii_alphanumeric()) {
            // A wildcard pattern (`*.log`, `src/**/*.rs`) names the files it matches.
            push(chunk, "pattern", "glob");
            continue;
        }
        // `Checkout:RetryCount`, `FeatureX:Enabled=true`: a configuration key written section by
        // section, as app settings name them.
        if is_config_key(chunk.split_once('=').map_or(chunk, |(k, _)| k)) {
            push(chunk, "setting", "");
            if chunk.contains('=') {
                push(chunk, "parameter", "");
            }
            continue;
        }
        // `max_connections=500`, `innodb_lock_wait_timeout = 120`: a setting assigned a value
        // names a parameter; the value is a name. (A tool's own argument written with its value,
        // `max_count 5`, says which tool by its words.)
        if let Some((key, value)) = chunk.split_once('=').filter(|(k, v)| is_setting_name(k) && !v.is_empty())
        {
            push(key, "parameter", "");
            push(value, "", "");
            continue;
        }
        if is_setting_name(chunk) && chunks.get(i + 1) == Some(&"=") {
            push(chunk, "parameter", "");
            continue;
        }
        if let Some((key, value)) = chunk.split_once('=')
            && key.bytes().any(|b| b.is_ascii_alphabetic())
            && !value.is_empty()
        {
            // `max_connections=500`: the key is a word of the ask, the value a name.
            push(value, "", "");
            continue;
        }
        if is_file_name(chunk) {
            push(chunk, "file", "file");
            continue;
        }
        if let Some((stem, ext)) = chunk.rsplit_once('.')
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
            && stem.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-/.~".contains(&b))
            && !stem.contains("..")
        {
            // A host name (`example.com`) is an address, not a file.
            if matches!(ext, "com" | "org" | "net" | "io" | "dev" | "app") {
                push(chunk, "url", "host");
            } else {
                push(chunk, "file", "file");
                if let Some(kind) = media_kind(ext) {
                    push(chunk, kind, "");
                }
            }
            continue;
        }
        let pathlike = chunk.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-/.~".contains(&b));
        if pathlike && chunk.bytes().any(|b| b.is_ascii_alphabetic()) {
            if starts("~/") || starts("./") || starts("../") {
                push(chunk, "directory", "");
                continue;
            }
            if chunk.len() > 1 && chunk.starts_with('/') {
                push(chunk, "path", "");
                continue;
            }
            // The long-lived branches named by convention (`main` is too plain a word).
            if matches!(lower[i].as_str(), "develop" | "master" | "trunk") {
                push(chunk, "branch", "");
                continue;
            }
            let slashes = chunk.bytes().filter(|&b| b == b'/').count();
            if slashes >= 2 || (slashes == 1 && chunk.ends_with('/')) {
                push(chunk, "directory", "");
                continue;
            }
            if let Some((left, right)) = chunk.split_once('/')
                && !left.is_empty()
                && !right.is_empty()
            {
                let left = left.to_ascii_lowercase();
                let right_lower = right.to_ascii_lowercase();
                if BRANCH_PREFIXES.contains(&left.as_str()) {
                    push(chunk, "branch", "");
                    continue;
                }
                // `Microsoft.Web/sites`: a dotted namespace and a type, not an owner (an owner
                // name has no dot) and a repository.
                if left.contains('.')
                    && left.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphabetic()))
                {
                    push(chunk, "", "");
                    continue;
                }
                let word = |w: &str| w.len() >= 2 && w.bytes().any(|b| b.is_ascii_alphabetic());
                let prose =
                    SLASH_WORDS.contains(&left.as_str()) || SLASH_WORDS.contains(&right_lower.as_str());
                if word(&left) && word(&right_lower) && !prose {
                    push(chunk, "repository", "");
                    continue;
                }
                // `archive/2024`: a path with a part that is no word.
                if (word(&left) || word(&right_lower)) && !prose {
                    push(chunk, "directory", "");
                    continue;
                }
            }
        }
        if is_commit_hash(chunk) {
            push(chunk, "commit", "");
            continue;
        }
        // `3h against OPS-7`: time spent, a worklog (`the last 3h` is a window of time).
        if time_spent(chunk, &lower, i) {
            push(chunk, "worklog", "duration");
            continue;
        }
        if is_clock_time(chunk)
            || (matches!(lower[i].as_str(), "am" | "pm")
                && i > 0
                && chunks[i - 1].bytes().all(|b| b.is_ascii_digit() || b == b':'))
        {
            push(chunk, "time", "");
            timed = true;
            continue;
        }
        if ZONE_ABBREVIATIONS.contains(&chunk) || matches!(lower[i].as_str(), "utc" | "gmt") {
            push(chunk, "timezone", "");
            timed = true;
            continue;
        }
        // `the prod subscription`: a deployment's short name qualifies what the ask is about
        // (and `prod` is no prefix of `product`).
        if matches!(lower[i].as_str(), "prod" | "preprod" | "stg" | "uat") {
            push(chunk, "", "");
            continue;
        }
        // `USD`, `$40`, `€12.50`: a price.
        if CURRENCY_CODES.contains(&chunk)
            || chunk
                .strip_prefix(['$', '€', '£', '¥'])
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        {
            push(chunk, "price", "");
            continue;
        }
        if pathlike && (chunk.contains('-') || chunk.contains('_')) {
            let parts: Vec<&str> = lower[i].split(['-', '_']).filter(|p| !p.is_empty()).collect();
            let numbered = parts.iter().any(|p| p.bytes().any(|b| b.is_ascii_digit()));
            let deployed = parts.iter().any(|p| ENV_WORDS.contains(p));
            let lettered = parts.iter().any(|p| p.len() == 1 && p.bytes().all(|b| b.is_ascii_alphabetic()));
            // A part that is no word, of English or of the catalog (`hm-checkout`, `fss-corp`):
            // a coined name, not a compound (`read-only`, `payments-api`).
            let coined = || {
                chunk.contains('-')
                    && parts.iter().any(|p| {
                        p.len() >= 2 && p.bytes().all(|b| b.is_ascii_lowercase()) && !known(p) && !is_word(p)
                    })
            };
            // Beside a word that says what it names (`vm web-01`, `the new-checkout rollout`);
            // a snake_case chunk (`workflow_id`) or one made of such words (`resource-group`) is
            // a field or a kind, not a name.
            let typed = chunk.contains('-')
                && !parts.iter().any(|p| TYPE_NOUNS.contains(p))
                && [i.checked_sub(1), Some(i + 1)]
                    .into_iter()
                    .flatten()
                    .filter_map(|j| lower.get(j))
                    .any(|w| TYPE_NOUNS.contains(&w.as_str()));
            // `kv-shop-prod`: a name whose first part says what it names.
            let resource = (parts.len() >= 2 && chunk.contains('-'))
                .then(|| RESOURCE_PREFIXES.iter().find(|(prefix, _)| *prefix == parts[0]))
                .flatten();
            if let Some(&(_, kind)) = resource {
                push(chunk, kind, "");
                continue;
            }
            if parts.len() >= 2 && (numbered || deployed || lettered || typed || coined()) {
                push(chunk, "", "");
                continue;
            }
        }
        if let Some(name) = chunk.strip_suffix("'s").or_else(|| chunk.strip_suffix("\u{2019}s"))
            && name.len() >= 3
            && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && name.chars().skip(1).all(|c| c.is_ascii_lowercase())
            && !NOT_PEOPLE.contains(&name.to_ascii_lowercase().as_str())
            && !known(&name.to_ascii_lowercase())
        {
            push(chunk, "user", "");
        }
    }
    // A place names a time zone in a question about the time.
    if !timed && !lower.iter().any(|w| TIME_CUES.contains(&w.as_str())) {
        return;
    }
    let places = places();
    let mut i = 0;
    while i < chunks.len() {
        let mut matched = 0;
        for n in (1..=3).rev() {
            if i + n > chunks.len() {
                continue;
            }
            let name = lower[i..i + n].join(" ");
            let region = lower.get(i + n).is_some_and(|w| COMPASS.contains(&w.as_str()))
                || i.checked_sub(1).is_some_and(|j| matches!(lower[j].as_str(), "region" | "location"));
            if places.contains(name.as_str()) && !region {
                matched = n;
                break;
            }
        }
        if matched == 0 {
            i += 1;
            continue;
        }
        let start = chunks[i].as_ptr() as usize - query.as_ptr() as usize;
        let last = chunks[i + matched - 1];
        let end = last.as_ptr() as usize - query.as_ptr() as usize + last.len();
        f(&query[start..end], "timezone", "");
        i += matched;
    }
}

/// Whether English (WordNet) or the search vocabulary has a word, in any inflection.
fn is_word(word: &str) -> bool {
    let term = super::analysis::stem(word);
    let lexicon = super::lexicon::lexicon();
    super::wordnet::wordnet_relatives(&term).next().is_some()
        || lexicon.expansions.contains_key(&term)
        || lexicon.phrase_starts.contains_key(&term)
        || lexicon.aliases.contains_key(word)
}
