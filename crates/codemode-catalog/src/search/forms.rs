//! What one chunk of a query is by its written form alone: an address, a date, an id, an
//! endpoint, a clock time, a search qualifier; and where a query written in a query language
//! (JQL, CQL, KQL, SQL) starts. `entities` decides what each names in the query.

/// Host name endings of cloud endpoints and the kind of resource each names
/// (`myregistry.azurecr.io` a container registry, `kv-prod.vault.azure.net` a key vault): such an
/// address names a resource, not a web page.
const CLOUD_HOSTS: &[(&str, &str)] = &[
    (".azconfig.io", "appconfig"),
    (".azurecr.io", "registry"),
    (".azurewebsites.net", "webapp"),
    (".blob.core.windows.net", "blob"),
    (".database.windows.net", "sql"),
    (".documents.azure.com", "cosmos"),
    (".kusto.windows.net", "kusto"),
    (".mysql.database.azure.com", "mysql"),
    (".postgres.database.azure.com", "postgres"),
    (".redis.cache.windows.net", "redis"),
    (".servicebus.windows.net", "servicebus"),
    (".vault.azure.net", "keyvault"),
];

/// Fields of Jira's query language (JQL) written before an operator (`status = Open`).
const JQL_FIELDS: &[&str] = &[
    "affectedversion",
    "assignee",
    "component",
    "created",
    "due",
    "duedate",
    "epic",
    "fixversion",
    "issuekey",
    "issuetype",
    "key",
    "labels",
    "parent",
    "priority",
    "project",
    "reporter",
    "resolution",
    "resolved",
    "sprint",
    "status",
    "statuscategory",
    "summary",
    "updated",
    "watcher",
];

/// Fields of Confluence's query language (CQL).
const CQL_FIELDS: &[&str] =
    &["ancestor", "contributor", "creator", "label", "lastmodified", "space", "title", "type"];

/// Operators of those query languages, written apart from their field.
const QUERY_OPERATORS: &[&str] = &["=", "!=", "~", "!~", ">", ">=", "<", "<=", "in", "is", "was"];

/// What [`query_language`] and a search qualifier say a filter or statement is: its words are
/// field names and values (a KQL pipeline names its tables and columns, which still say what it
/// is over).
pub(super) const QUERY_LANGUAGES: &[&str] = &["cql", "jql", "query", "search"];

/// Tabular operators of the Kusto query language (KQL) after a `|`.
const KQL_OPERATORS: &[&str] = &[
    "bin",
    "count",
    "distinct",
    "extend",
    "join",
    "limit",
    "order",
    "parse",
    "project",
    "render",
    "sort",
    "summarize",
    "take",
    "top",
    "where",
];

/// Qualifiers of a code host's search syntax (`is:open`, `label:bug`, `repo:owner/name`).
const SEARCH_QUALIFIERS: &[&str] = &[
    "assignee",
    "author",
    "base",
    "created",
    "extension",
    "filename",
    "head",
    "in",
    "involves",
    "is",
    "label",
    "language",
    "mentions",
    "org",
    "path",
    "repo",
    "review",
    "sort",
    "state",
    "topic",
    "type",
    "updated",
    "user",
];

/// Where a query written in a query language starts, and what kind of query it is: a JQL or
/// CQL filter (`assignee = currentUser() AND status = 'In Progress'`: a field, an operator, and a
/// conjunction, an `ORDER BY` or a function call), a KQL pipeline (`Telemetry | where ...`), or
/// SQL (`SELECT ... FROM`). Its words are the query's text, not words of the ask.
pub(super) fn query_language(chunks: &[&str], lower: &[String]) -> Option<(usize, &'static str)> {
    let n = chunks.len();
    // The last `select` before a `from` (in "run a SELECT on db: select * from items" the
    // first one is a word of the ask).
    if let Some(from) = lower.iter().rposition(|w| w == "from")
        && let Some(select) = lower[..from].iter().rposition(|w| w == "select")
    {
        return Some((select, "query"));
    }
    if let Some(i) = (0..n)
        .find(|&i| chunks[i] == "|" && lower.get(i + 1).is_some_and(|o| KQL_OPERATORS.contains(&o.as_str())))
    {
        return Some((i.saturating_sub(1), "kql"));
    }
    let field_at = |i: usize| -> Option<&'static str> {
        let (field, operator) = match lower[i].split_once(['=', '~']) {
            Some((field, _)) if !field.is_empty() => (field.trim_end_matches('!'), true),
            _ => (lower[i].as_str(), lower.get(i + 1).is_some_and(|o| QUERY_OPERATORS.contains(&o.as_str()))),
        };
        if !operator {
            return None;
        }
        if JQL_FIELDS.contains(&field) {
            Some("jql")
        } else if CQL_FIELDS.contains(&field) {
            Some("cql")
        } else {
            None
        }
    };
    let start = (0..n).find(|&i| field_at(i).is_some())?;
    let clauses = (start..n).filter(|&i| field_at(i).is_some()).count();
    let joined = chunks[start..].iter().any(|c| matches!(*c, "AND" | "OR" | "ORDER") || c.ends_with("()"));
    if clauses < 2 && !joined {
        return None;
    }
    let cql = (start..n).any(|i| field_at(i) == Some("cql"));
    let jql = (start..n).any(|i| field_at(i) == Some("jql"));
    Some((start, if cql && !jql { "cql" } else { "jql" }))
}

/// An IPv4 address or range: `10.4.0.0`, `10.0.0.0/24`.
pub(super) fn is_ip_address(chunk: &str) -> bool {
    let address = chunk.split_once('/').map_or(chunk, |(a, bits)| {
        if !bits.is_empty() && bits.len() <= 2 && bits.bytes().all(|b| b.is_ascii_digit()) { a } else { "" }
    });
    let parts: Vec<&str> = address.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A calendar date written the ISO way: `2025-01-15`, `2025-01-15T09:30:00Z`.
pub(super) fn is_iso_date(chunk: &str) -> bool {
    let date = chunk.get(..10).unwrap_or_default();
    let b = date.as_bytes();
    date.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && (chunk.len() == 10 || chunk.as_bytes()[10] == b'T')
}

/// An email address: `bob@corp.io`.
pub(super) fn is_email(chunk: &str) -> bool {
    let Some((local, domain)) = chunk.split_once('@') else { return false };
    !local.is_empty()
        && local.bytes().all(|b| b.is_ascii_alphanumeric() || b"._+-".contains(&b))
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.bytes().all(|b| b.is_ascii_alphanumeric() || b".-".contains(&b))
}

/// The kind of resource a cloud endpoint's address names (`myregistry.azurecr.io`, a registry).
pub(super) fn cloud_host_kind(lower: &str) -> Option<&'static str> {
    let host = lower.trim_start_matches("https://").trim_start_matches("http://");
    let host = host.split('/').next().unwrap_or_default();
    CLOUD_HOSTS.iter().find(|(end, _)| host.ends_with(end)).map(|&(_, kind)| kind)
}

/// A security advisory's id: `CVE-2024-3094`, `GHSA-4xqg-8q7f-2m3v`.
pub(super) fn is_advisory_id(lower: &str) -> bool {
    if let Some(rest) = lower.strip_prefix("cve-") {
        let mut parts = rest.split('-');
        let year = parts.next().unwrap_or_default();
        let number = parts.next().unwrap_or_default();
        return year.len() == 4
            && year.bytes().all(|b| b.is_ascii_digit())
            && number.len() >= 4
            && number.bytes().all(|b| b.is_ascii_digit())
            && parts.next().is_none();
    }
    lower.strip_prefix("ghsa-").is_some_and(|rest| {
        let parts: Vec<&str> = rest.split('-').collect();
        parts.len() == 3 && parts.iter().all(|p| p.len() == 4 && p.bytes().all(|b| b.is_ascii_alphanumeric()))
    })
}

/// A code host's search qualifier: `is:open`, `label:bug`, `repo:owner/name`.
pub(super) fn is_search_qualifier(lower: &str) -> bool {
    lower.split_once(':').is_some_and(|(name, value)| {
        SEARCH_QUALIFIERS.contains(&name) && !value.is_empty() && !value.starts_with('/')
    })
}

/// The kind a file's extension adds to `file`.
pub(super) fn media_kind(ext: &str) -> Option<&'static str> {
    Some(match ext.to_ascii_lowercase().as_str() {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" | "svg" | "ico" | "tiff" => "image",
        "mp3" | "wav" | "m4a" | "ogg" | "flac" | "aac" | "opus" => "audio",
        "mp4" | "mov" | "webm" | "mkv" | "avi" => "video",
        "zip" | "gz" | "tgz" | "tar" | "bz2" | "xz" | "7z" | "rar" => "archive",
        _ => return None,
    })
}

/// A clock time: `3pm`, `10am`, `9:30`, `15:00`, `9:30am`.
pub(super) fn is_clock_time(chunk: &str) -> bool {
    let lower = chunk.to_ascii_lowercase();
    let (digits, suffixed) = match lower.strip_suffix("am").or_else(|| lower.strip_suffix("pm")) {
        Some(rest) => (rest.to_owned(), true),
        None => (lower.clone(), false),
    };
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) => (h, Some(m)),
        None => (digits.as_str(), None),
    };
    let hours_ok = (1..=2).contains(&hours.len()) && hours.bytes().all(|b| b.is_ascii_digit());
    let minutes_ok = minutes.is_none_or(|m| m.len() == 2 && m.bytes().all(|b| b.is_ascii_digit()));
    hours_ok && minutes_ok && (suffixed || minutes.is_some())
}

/// An emoji shortcode: `:tada:`, `:white_check_mark:`, `:+1:`.
pub(super) fn is_emoji_code(chunk: &str) -> bool {
    let Some(inner) = chunk.strip_prefix(':').and_then(|c| c.strip_suffix(':')) else { return false };
    !inner.is_empty()
        && inner.len() <= 40
        && inner.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_+-".contains(&b))
        && (inner.bytes().any(|b| b.is_ascii_lowercase()) || matches!(inner, "+1" | "-1"))
}

/// A phone number: `+4915112345678`, `+1-555-010-9999`, `555-010-9999`, or a country code
/// (`+44`) followed by a chunk of digits.
pub(super) fn is_phone_number(chunk: &str, next: Option<&str>) -> bool {
    let digits = chunk.bytes().filter(u8::is_ascii_digit).count();
    let formed = chunk.bytes().all(|b| b.is_ascii_digit() || b"+-.()".contains(&b));
    if digits == 0 || !formed || chunk[1..].contains('+') {
        return false;
    }
    if let Some(rest) = chunk.strip_prefix('+') {
        let spaced = (1..=3).contains(&rest.len())
            && next.is_some_and(|n| n.len() >= 2 && n.bytes().all(|b| b.is_ascii_digit() || b == b'-'));
        return (7..=15).contains(&digits) || spaced;
    }
    // `555-010-9999`: three groups of digits, 3-3-4.
    let groups: Vec<usize> = chunk.split('-').map(str::len).collect();
    groups == [3, 3, 4] && digits == 10
}

/// A chat platform's id: `U024BE7LH` (a user) or `C01ABCDEF9` (a channel): a capital `U`, `W` or
/// `C` and 8 to 10 more capitals and digits, at least two of each.
pub(super) fn chat_id_kind(chunk: &str) -> Option<&'static str> {
    let kind = match chunk.as_bytes().first()? {
        b'U' | b'W' => "user",
        b'C' => "channel",
        _ => return None,
    };
    let rest = &chunk[1..];
    let ok = (6..=10).contains(&rest.len())
        && rest.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && rest.bytes().filter(u8::is_ascii_digit).count() >= 2
        && rest.bytes().filter(u8::is_ascii_uppercase).count() >= 2;
    ok.then_some(kind)
}

/// What a GitHub GraphQL node id names, by its type prefix (`PRRT_kwDOAbc123` a pull request
/// review thread, `DC_kwDO99` a discussion comment, `I_kwDOA1` an issue): the words tools use
/// for that kind of object. Ids of the current format only (`kwDO`, `kgDO`, ... after the `_`).
pub(super) fn github_node_kinds(chunk: &str) -> Option<&'static [&'static str]> {
    let (prefix, id) = chunk.split_once('_')?;
    let formed = id.len() >= 4
        && id.starts_with('k')
        && id.as_bytes().get(2) == Some(&b'D')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !formed {
        return None;
    }
    Some(match prefix {
        "I" => &["issue"],
        "IC" => &["issue", "comment"],
        "PR" => &["pull"],
        "PRR" => &["review"],
        "PRRC" => &["review", "comment"],
        "PRRT" => &["review", "thread"],
        "D" => &["discussion"],
        "DC" => &["discussion", "comment"],
        "R" => &["repository"],
        "U" => &["user"],
        "O" => &["organization"],
        "PVT" => &["project"],
        "MI" => &["milestone"],
        "LA" => &["label"],
        "RE" => &["release"],
        "REF" => &["branch"],
        "C" => &["commit"],
        _ => return None,
    })
}

/// What an id in an Atlassian product's own form names: `customfield_10016` a Jira field,
/// `att44556` a Confluence attachment.
pub(super) fn atlassian_id_kind(chunk: &str) -> Option<&'static str> {
    let digits = |s: &str| s.len() >= 3 && s.bytes().all(|b| b.is_ascii_digit());
    let lower = chunk.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("customfield_") {
        return (rest.is_empty() || digits(rest)).then_some("field");
    }
    lower.strip_prefix("att").is_some_and(digits).then_some("attachment")
}

/// A key named the way keyboard tools name it, capitalised (`Escape`, `Enter`, `ArrowDown`,
/// `PageUp`, `F5`): ambiguous lower-case words (`tab`, `home`, `end`, `space`) are left out.
pub(super) fn is_key_name(chunk: &str) -> bool {
    const KEYS: &[&str] = &[
        "ArrowDown",
        "ArrowLeft",
        "ArrowRight",
        "ArrowUp",
        "Backspace",
        "Enter",
        "Esc",
        "Escape",
        "PageDown",
        "PageUp",
    ];
    KEYS.contains(&chunk)
        || chunk
            .strip_prefix('F')
            .and_then(|n| n.parse::<u8>().ok())
            .is_some_and(|n| (1..=12).contains(&n) && !chunk[1..].starts_with('0'))
}

/// A key combination written with its modifiers (`ctrl+shift+p`, `cmd-k`, `alt+tab`): a
/// modifier, then modifiers, single characters, function keys or named keys.
pub(super) fn is_key_chord(lower: &str) -> bool {
    const MODIFIERS: &[&str] = &[
        "alt", "cmd", "command", "control", "ctl", "ctrl", "meta", "option", "shift", "shft", "super", "win",
    ];
    const KEYS: &[&str] = &[
        "backspace",
        "del",
        "delete",
        "down",
        "end",
        "enter",
        "esc",
        "escape",
        "home",
        "ins",
        "insert",
        "left",
        "pagedown",
        "pageup",
        "pgdn",
        "pgup",
        "return",
        "right",
        "space",
        "tab",
        "up",
    ];
    let mut parts = lower.split(['+', '-']);
    let Some(first) = parts.next() else { return false };
    let rest: Vec<&str> = parts.collect();
    let key = |p: &&str| {
        p.chars().count() == 1
            || MODIFIERS.contains(p)
            || KEYS.contains(p)
            || p.strip_prefix('f')
                .is_some_and(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
    };
    MODIFIERS.contains(&first) && !rest.is_empty() && rest.iter().all(key)
}

/// A duration written as time trackers write it, in lower case: `3h`, `30m`, `1d`, `2.5h`,
/// `1h30m`, `45min` (`3D` is no duration).
pub(super) fn is_duration(chunk: &str) -> bool {
    let mut rest = chunk;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
        if digits == 0 || !rest.as_bytes()[0].is_ascii_digit() {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["hrs", "hr", "h", "mins", "min", "m", "d", "w"].iter().find(|u| rest.starts_with(**u));
        let Some(unit) = unit else { return false };
        rest = &rest[unit.len()..];
        parts += 1;
    }
    parts >= 1
}

/// A commit hash: 7 (git's shortest abbreviation) to 40 hex digits, at least two of them digits
/// and one a letter. Shorter ones (`abc123`) are as often a session or record id.
pub(super) fn is_commit_hash(chunk: &str) -> bool {
    (7..=40).contains(&chunk.len())
        && chunk.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && chunk.bytes().filter(u8::is_ascii_digit).count() >= 2
        && chunk.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a chunk is a setting's name (`max_connections`, `innodb_lock_wait_timeout`): two
/// lower-case words or more joined by `_`, as configuration parameters are written.
pub(super) fn is_setting_name(chunk: &str) -> bool {
    chunk.split('_').filter(|p| !p.is_empty()).count() >= 2
        && chunk.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && chunk.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// A colour written in hex after `#` (`#d73a4a`, `#f0f`): three or six hex digits, letters and
/// digits both (`#123` is an issue, `#facade` a channel).
pub(super) fn is_hex_color(chunk: &str) -> bool {
    chunk.strip_prefix('#').is_some_and(|hex| {
        matches!(hex.len(), 3 | 6)
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && hex.bytes().any(|b| b.is_ascii_digit())
            && hex.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// A configuration key written section by section with colons (`Checkout:RetryCount`,
/// `Logging:LogLevel:Default`): each part a capitalised name (not a time, a URL or a
/// `label:bug` qualifier).
pub(super) fn is_config_key(chunk: &str) -> bool {
    let parts: Vec<&str> = chunk.split(':').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.len() >= 2
                && p.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// A size on screen at the start of `words`: `1280x720` (or `1280×720`, with `px`), `1280 by 720`,
/// or a number of pixels followed by `wide`, `tall`, `high`, `px` or `pixels` (`390 wide`).
pub(super) fn is_screen_size(words: &[String]) -> bool {
    let digits = |s: &str| (2..=5).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    let word = words[0].strip_suffix("px").unwrap_or(&words[0]);
    if let Some((w, h)) = word.split_once('x').or_else(|| word.split_once('×')) {
        return digits(w) && digits(h);
    }
    let next = |k: usize| words.get(k).map(String::as_str);
    digits(word)
        && (matches!(next(1), Some("wide" | "tall" | "high" | "px" | "pixels"))
            || (next(1) == Some("by") && next(2).is_some_and(|h| digits(h.strip_suffix("px").unwrap_or(h)))))
}

/// A file known by a name without an extension (`Dockerfile`, `docker/Dockerfile`, `Makefile`,
/// `README`, `CODEOWNERS`): the last part of a path is a build or project file's conventional
/// name. The `...file` names are matched in any case; the capitalised notices (`docs/README`,
/// `LICENSE`) only in capitals and in a path (`with a README` asks for a repository set up with
/// one, and `license` or `notice` alone are plain words).
pub(super) fn is_file_name(chunk: &str) -> bool {
    const BUILD_FILES: &[&str] = &[
        "dockerfile",
        "containerfile",
        "makefile",
        "gnumakefile",
        "jenkinsfile",
        "procfile",
        "gemfile",
        "rakefile",
        "vagrantfile",
        "justfile",
        "brewfile",
        "podfile",
        "pipfile",
        "snakefile",
    ];
    const NOTICES: &[&str] =
        &["README", "LICENSE", "LICENCE", "CHANGELOG", "CODEOWNERS", "CONTRIBUTING", "AUTHORS", "NOTICE"];
    let name = chunk.rsplit('/').next().unwrap_or(chunk);
    BUILD_FILES.iter().any(|f| f.eq_ignore_ascii_case(name)) || (name != chunk && NOTICES.contains(&name))
}
