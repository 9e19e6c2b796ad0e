//! Exact MCP names -> JavaScript identifiers, deterministic, injective, reversible through a table.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use codemode_core::guest::{FUNCTION_MEMBER_NAMES, OBJECT_MEMBER_NAMES};
use codemode_core::ident::to_camel_identifier;

/// Longest identifier base, in characters (a collision suffix may add digits).
pub const MAX_IDENT_CHARS: usize = 64;

/// A bijection between the exact names of one level (servers, or the tools of one server) and
/// their JavaScript identifiers.
///
/// # Rules
///
/// For the servers of one run, and separately for the tools of each server:
///
/// 1. Exact duplicates (the same name twice) keep their first occurrence; later ones are counted in
///    [`NameTable::duplicates`] and get no identifier (a catalog id must name one tool).
/// 2. Each name's *base* is [`to_camel_identifier`] of it (`chrome-devtools` -> `chromeDevtools`,
///    `create_issue` -> `createIssue`, `delete` -> `delete2`, `2fa` -> `_2fa`), cut to
///    [`MAX_IDENT_CHARS`] characters.
/// 3. A base in [`OBJECT_MEMBER_NAMES`] or [`FUNCTION_MEMBER_NAMES`] (object- and
///    function-prototype members guest code may reach through a namespace object, and `then`,
///    which would make the namespace object a thenable; see `is_dangerous`), or in the names the surrounding object already uses (`$api`,
///    `resources`, `prompts` inside a server namespace), gets the suffix `2`.
/// 4. Names whose bases collide form a group. Every group first hands its base to one member: the
///    name that *is* its base if there is one (`createIssue` keeps `createIssue` against
///    `create_issue`), otherwise the smallest name in byte order. Only then do the other members,
///    in byte order of (base, name), get `<base>2`, `<base>3`, ... — the first number whose result
///    no other name holds. Nothing is dropped and the result does not depend on input order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameTable {
    /// `(identifier, exact name)` in the order the names were given (duplicates removed).
    entries: Vec<(String, String)>,
    by_ident: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
    duplicates: usize,
}

impl NameTable {
    /// Maps `names` (in their given order) to identifiers, never producing one of `taken`.
    pub fn build<'a>(names: impl IntoIterator<Item = &'a str>, taken: &[&str]) -> NameTable {
        let mut unique: Vec<&str> = Vec::new();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut duplicates = 0;
        for name in names {
            if seen.insert(name) {
                unique.push(name);
            } else {
                duplicates += 1;
            }
        }
        let bases: Vec<String> = unique.iter().map(|name| base_ident(name, taken)).collect();
        let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, base) in bases.iter().enumerate() {
            groups.entry(base.as_str()).or_default().push(i);
        }
        let mut idents: Vec<Option<String>> = vec![None; unique.len()];
        let mut used: BTreeSet<String> = taken.iter().map(|s| (*s).to_owned()).collect();
        let mut rest: Vec<(&str, &str, usize)> = Vec::new();
        for (base, members) in &groups {
            let winner = members
                .iter()
                .copied()
                .min_by_key(|&i| (unique[i] != *base, unique[i]))
                .unwrap_or(members[0]);
            used.insert((*base).to_owned());
            idents[winner] = Some((*base).to_owned());
            rest.extend(members.iter().filter(|&&i| i != winner).map(|&i| (*base, unique[i], i)));
        }
        rest.sort_unstable();
        // Per base, the next number to try: keeps large groups linear instead of quadratic.
        let mut next: HashMap<&str, u64> = HashMap::new();
        for (base, _, i) in rest {
            let n = next.entry(base).or_insert(2);
            let ident = loop {
                let candidate = format!("{base}{n}");
                *n += 1;
                if !used.contains(&candidate) {
                    break candidate;
                }
            };
            used.insert(ident.clone());
            idents[i] = Some(ident);
        }
        let mut table = NameTable { duplicates, ..NameTable::default() };
        for (name, ident) in unique.into_iter().zip(idents) {
            let ident = ident.unwrap_or_default();
            let at = table.entries.len();
            table.by_ident.insert(ident.clone(), at);
            table.by_name.insert(name.to_owned(), at);
            table.entries.push((ident, name.to_owned()));
        }
        table
    }

    /// `(identifier, exact name)` pairs in the order the names were given.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.entries.iter().map(|(ident, name)| (ident.as_str(), name.as_str()))
    }

    /// The identifier of an exact name.
    pub fn ident(&self, name: &str) -> Option<&str> {
        self.by_name.get(name).map(|&i| self.entries[i].0.as_str())
    }

    /// The exact name behind an identifier.
    pub fn name(&self, ident: &str) -> Option<&str> {
        self.by_ident.get(ident).map(|&i| self.entries[i].1.as_str())
    }

    /// The `(identifier, exact name)` pair at a position.
    pub(crate) fn entry_at(&self, at: usize) -> Option<(&str, &str)> {
        self.entries.get(at).map(|(ident, name)| (ident.as_str(), name.as_str()))
    }

    /// Position (in [`entries`](Self::entries)) of an identifier.
    pub(crate) fn index_of_ident(&self, ident: &str) -> Option<usize> {
        self.by_ident.get(ident).copied()
    }

    /// Position (in [`entries`](Self::entries)) of an exact name.
    pub(crate) fn index_of_name(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Number of mapped names.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no name is mapped.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many exact duplicates were ignored.
    pub fn duplicates(&self) -> usize {
        self.duplicates
    }
}

/// The base identifier of one exact name (rules 2 and 3 of the module docs).
pub(crate) fn base_ident(name: &str, taken: &[&str]) -> String {
    // Only a bounded prefix matters; an identifier never has more characters than its source.
    let prefix: String = name.chars().take(MAX_IDENT_CHARS * 8).collect();
    let mut ident = to_camel_identifier(&prefix);
    if ident.len() > MAX_IDENT_CHARS {
        // Identifiers are ASCII, so byte length is character count.
        ident.truncate(MAX_IDENT_CHARS);
    }
    if is_dangerous(&ident) || taken.contains(&ident.as_str()) {
        ident.push('2');
    }
    ident
}

/// Whether an identifier is one no server or tool takes as it is (rule 3): a member of
/// `Object.prototype` or `Function.prototype` guest code may reach through a namespace object, or
/// `then`. Reserved words are handled by [`to_camel_identifier`] already.
pub(crate) fn is_dangerous(ident: &str) -> bool {
    OBJECT_MEMBER_NAMES.contains(&ident) || FUNCTION_MEMBER_NAMES.contains(&ident)
}
