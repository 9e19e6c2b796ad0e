//! Safe convenience names: `tools.<safe name>(input)` for guest-visible entries.

use std::collections::BTreeMap;

use codemode_core::guest::{OBJECT_MEMBER_NAMES, RESERVED_GLOBALS, TOOLS_HELPERS, is_private};
use codemode_core::ident::{is_identifier_part, is_reserved_word};

/// Why a normalized name is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusedName {
    /// Nothing usable is left after normalization.
    Empty,
    /// One of [`TOOLS_HELPERS`].
    Helper,
    /// A JavaScript reserved word.
    ReservedWord,
    /// An `Object.prototype` member or `then`.
    ObjectMember,
    /// A Code Mode global.
    CodeModeGlobal,
    /// Starts with a private prefix.
    PrivatePrefix,
}

impl RefusedName {
    /// A short reason for diagnostics.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusedName::Empty => "nothing usable left after normalization",
            RefusedName::Helper => "collides with a tools.* helper",
            RefusedName::ReservedWord => "a JavaScript reserved word",
            RefusedName::ObjectMember => "an Object.prototype member or `then`",
            RefusedName::CodeModeGlobal => "a Code Mode global",
            RefusedName::PrivatePrefix => "starts with a private prefix",
        }
    }
}

/// Rules 1-3: the normalized form of a tool name (before the refusal checks).
pub fn normalize_tool_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    let mut in_run = false;
    for c in name.chars() {
        if is_identifier_part(c) {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "t_");
    }
    out
}

/// Rules 1-4: the safe name of one tool name, or why it has none. Ambiguity (rule 5) is decided
/// over a whole catalog by [`Catalog::build`](crate::Catalog::build).
///
/// # Normalization
///
/// A tool's safe name is derived from its **name** (not its id) by these rules, in order:
///
/// 1. every maximal run of characters other than ASCII letters, ASCII digits, `_` and `$` becomes
///    one `_` (`get-feature-flag` -> `get_feature_flag`, `get.thing` -> `get_thing`,
///    `café` -> `caf_`); case is kept (`createIssue` stays `createIssue`);
/// 2. a name with no ASCII letter or digit left gets no safe name;
/// 3. a name starting with an ASCII digit is prefixed with `t_` (`2fa` -> `t_2fa`);
/// 4. the result is refused (no safe name) when it is one of the helper names `search`,
///    `describe`, `call`, `callValue` ([`TOOLS_HELPERS`]); a JavaScript reserved word (per
///    [`codemode_core::ident::RESERVED_WORDS`], which includes `__proto__`, `constructor` and
///    `prototype`); an `Object.prototype` member (`toString`, `valueOf`, `hasOwnProperty`, ...) or
///    `then` ([`OBJECT_MEMBER_NAMES`]) (installing it would make `tools` a thenable); a Code Mode global
///    ([`RESERVED_GLOBALS`]); or when it starts with a private prefix
///    ([`PRIVATE_PREFIXES`](codemode_core::guest::PRIVATE_PREFIXES));
/// 5. when two or more guest-visible entries map to the same safe name, none of them gets it (the
///    guest calls them with `tools.call(id, input)`).
///
/// Only guest-visible entries (core, plugin and client tools; never MCP) take part, so an MCP tool
/// can neither get a convenience name nor make a core tool's name ambiguous.
pub fn safe_tool_name(name: &str) -> Result<String, RefusedName> {
    let normalized = normalize_tool_name(name);
    if !normalized.chars().any(|c| c.is_ascii_alphanumeric()) {
        return Err(RefusedName::Empty);
    }
    if TOOLS_HELPERS.contains(&normalized.as_str()) {
        return Err(RefusedName::Helper);
    }
    if is_reserved_word(&normalized) {
        return Err(RefusedName::ReservedWord);
    }
    if OBJECT_MEMBER_NAMES.contains(&normalized.as_str()) {
        return Err(RefusedName::ObjectMember);
    }
    if RESERVED_GLOBALS.contains(&normalized.as_str()) {
        return Err(RefusedName::CodeModeGlobal);
    }
    if is_private(&normalized) {
        return Err(RefusedName::PrivatePrefix);
    }
    Ok(normalized)
}

/// The outcome of [`assign_safe_names`].
#[derive(Debug, Default)]
pub(crate) struct SafeNames {
    /// `(safe name, id)`, sorted by safe name.
    pub installed: Vec<(String, String)>,
    /// `(safe name, ids)` left out because several entries share it.
    pub ambiguous: Vec<(String, Vec<String>)>,
    /// `(id, reason)` for names refused by rules 2-4.
    pub refused: Vec<(String, RefusedName)>,
}

/// Applies rules 1-5 to `(id, tool name)` pairs of guest-visible entries, in catalog order.
pub(crate) fn assign_safe_names<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> SafeNames {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut out = SafeNames::default();
    for (id, name) in entries {
        match safe_tool_name(name) {
            Ok(safe) => groups.entry(safe).or_default().push(id.to_owned()),
            Err(reason) => out.refused.push((id.to_owned(), reason)),
        }
    }
    for (safe, mut ids) in groups {
        if ids.len() == 1 {
            out.installed.push((safe, ids.remove(0)));
        } else {
            out.ambiguous.push((safe, ids));
        }
    }
    out
}
