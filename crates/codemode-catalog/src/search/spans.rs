//! Readings of a query that look past one chunk: quoted values, workflow statuses written in
//! words (`In Review`), sums (`2 plus 3`), and durations that are time spent rather than a window
//! of time. `entities` decides what each names in the query.

use super::forms::is_duration;

/// The byte spans of quoted values in a query, quotes included: text between a pair of `"`, `'`,
/// `` ` ``, or curly quotes, where the opening quote starts a word and the closing one ends it
/// (`Dana's` and `don't` hold no quote).
pub(super) fn quoted_spans(query: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let chars: Vec<(usize, char)> = query.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let close = match c {
            '"' | '\'' | '`' => c,
            '\u{2018}' => '\u{2019}',
            '\u{201c}' => '\u{201d}',
            _ => {
                i += 1;
                continue;
            }
        };
        let opens = i == 0 || !chars[i - 1].1.is_alphanumeric();
        let found = opens
            .then(|| {
                (i + 2..chars.len()).find(|&j| {
                    chars[j].1 == close && chars.get(j + 1).is_none_or(|&(_, n)| !n.is_alphanumeric())
                })
            })
            .flatten();
        match found {
            Some(j) => {
                spans.push((at, chars[j].0 + chars[j].1.len_utf8()));
                i = j + 1;
            }
            None => i += 1,
        }
    }
    spans
}

/// A workflow status named as trackers name it, capitalised (`Done`, `In Progress`, `In Review`,
/// `To Do`), the chunk at `i` being such a name or its last word: `status`, or `transition` when
/// the query moves something to it (then in lower case too).
pub(super) fn workflow_status(chunks: &[&str], i: usize) -> Option<&'static str> {
    let previous = i.checked_sub(1).map(|j| chunks[j]);
    let (capitalised, start) = match chunks[i] {
        // Not the query's first word: `Done with this page, close it`.
        "Done" if previous.is_some() => (true, i),
        "Progress" | "Review" if previous == Some("In") => (true, i - 1),
        "Do" if previous == Some("To") => (true, i - 1),
        // In lower case only as the end of a move (`move the ticket to done`).
        "done" => (false, i),
        "progress" | "review" if previous == Some("in") => (false, i - 1),
        _ => return None,
    };
    // `to Done`, `over to In Progress`, `into review`: a move to the status, a transition.
    let moved = start.checked_sub(1).is_some_and(|j| matches!(chunks[j], "to" | "into"));
    match (moved, capitalised) {
        (true, _) => Some("transition"),
        (false, true) => Some("status"),
        (false, false) => None,
    }
}

/// Two numbers to add (`add 2 and 3`, `1843 plus 299`, `17 + 25`): the first names a sum.
pub(super) fn arithmetic(lower: &[String], i: usize) -> Option<&'static str> {
    let number = |j: usize| lower.get(j).is_some_and(|w| !w.is_empty() && w.parse::<f64>().is_ok());
    let joined = match lower.get(i + 1).map(String::as_str) {
        Some("plus" | "+") => true,
        Some("and") => {
            i.checked_sub(1).is_some_and(|j| matches!(lower[j].as_str(), "add" | "sum" | "adding"))
        }
        _ => false,
    };
    (number(i) && joined && number(i + 2)).then_some("sum")
}

/// A duration at `i` that is time spent, as trackers take it (`3h against OPS-7`), not a window
/// of time (`the last 3h`, `1h granularity`), which stays a word of the ask.
pub(super) fn time_spent(chunk: &str, lower: &[String], i: usize) -> bool {
    if !is_duration(chunk) {
        return false;
    }
    let window = i.checked_sub(1).is_some_and(|j| {
        matches!(
            lower[j].as_str(),
            "last" | "past" | "over" | "within" | "every" | "next" | "in" | "after" | "for"
        )
    }) || lower.get(i + 1).is_some_and(|w| {
        matches!(
            w.as_str(),
            "ago" | "granularity" | "interval" | "intervals" | "resolution" | "window" | "bins"
        )
    });
    !window
}
