//! The small TypeScript type tree that schemas are converted into before rendering.
//!
//! Constructors simplify as they build (flatten, dedupe, absorb `unknown`/`never`, merge object
//! intersections), so that the renderer never has to.

use std::collections::{HashMap, HashSet};

/// A TypeScript type expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    Keyword(Keyword),
    /// A literal type; `text` is its TypeScript source (`"a"`, `1`, `true`).
    Literal {
        text: String,
        kind: LiteralKind,
    },
    /// `T[]` / `Array<T>`.
    Array(Box<Ty>),
    Tuple(Tuple),
    Object(Object),
    /// Two or more members, none of them a union, `unknown` or `never`.
    Union(Vec<Ty>),
    /// Two or more members, none of them an intersection, `unknown`, `never`, or more than one object.
    Intersection(Vec<Ty>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Keyword {
    Unknown,
    Never,
    String,
    Number,
    Boolean,
    Null,
    /// Any object whose shape is not shown.
    Object,
}

impl Keyword {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Keyword::Unknown => "unknown",
            Keyword::Never => "never",
            Keyword::String => "string",
            Keyword::Number => "number",
            Keyword::Boolean => "boolean",
            Keyword::Null => "null",
            Keyword::Object => "object",
        }
    }
}

/// Which keyword a literal is an instance of (for `string | "a"` -> `string`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LiteralKind {
    String,
    Number,
    Boolean,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Tuple {
    pub(crate) elements: Vec<TupleElement>,
    /// `...T[]` after the elements; `None` for a closed tuple.
    pub(crate) rest: Option<Box<Ty>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TupleElement {
    pub(crate) ty: Ty,
    pub(crate) optional: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Object {
    pub(crate) props: Vec<Prop>,
    /// `[key: string]: T` (or `Record<string, T>` without properties).
    pub(crate) index: Option<Box<Ty>>,
    /// Keys beyond `props` (and `index`) may occur: rendered as nothing, or as `object` when there
    /// are no properties; never part of a complete hint.
    pub(crate) open: bool,
    /// Optional properties were removed to save space: rendered as `[key: string]: unknown`.
    pub(crate) dropped: bool,
    /// The schema declared its properties (possibly none): an open object without properties then
    /// renders as `{}` (takes no declared keys) rather than `object` (shape unknown).
    pub(crate) declared: bool,
    /// The schema itself opened the object (`additionalProperties: true` or `{}`, or the same for
    /// `unevaluatedProperties`): rendered as `Record<string, unknown>` without properties and with
    /// the index signature `[key: string]: unknown` after them, never as `{}` or `object`.
    pub(crate) explicit_open: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Prop {
    pub(crate) key: String,
    pub(crate) optional: bool,
    pub(crate) ty: Ty,
    /// Set on top-level optional properties when the renderer may drop them one by one.
    pub(crate) greedy_id: Option<usize>,
}

pub(crate) const UNKNOWN: Ty = Ty::Keyword(Keyword::Unknown);
pub(crate) const NEVER: Ty = Ty::Keyword(Keyword::Never);

impl Ty {
    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self, Ty::Keyword(Keyword::Unknown))
    }

    pub(crate) fn is_never(&self) -> bool {
        matches!(self, Ty::Keyword(Keyword::Never))
    }

    /// Whether any object in the tree admits undeclared keys.
    pub(crate) fn has_open_object(&self) -> bool {
        match self {
            Ty::Keyword(_) | Ty::Literal { .. } => false,
            Ty::Array(item) => item.has_open_object(),
            Ty::Tuple(tuple) => {
                tuple.elements.iter().any(|e| e.ty.has_open_object())
                    || tuple.rest.as_deref().is_some_and(Ty::has_open_object)
            }
            Ty::Object(object) => {
                object.open
                    || object.props.iter().any(|p| p.ty.has_open_object())
                    || object.index.as_deref().is_some_and(Ty::has_open_object)
            }
            Ty::Union(members) | Ty::Intersection(members) => members.iter().any(Ty::has_open_object),
        }
    }
}

/// `a | b | ...`, simplified.
pub(crate) fn union(members: Vec<Ty>) -> Ty {
    let mut flat: Vec<Ty> = Vec::with_capacity(members.len());
    for member in members {
        match member {
            Ty::Union(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    if flat.iter().any(Ty::is_unknown) {
        return UNKNOWN;
    }
    flat.retain(|m| !m.is_never());
    let mut flat = dedupe(flat);
    let has = |k: Keyword, flat: &[Ty]| flat.contains(&Ty::Keyword(k));
    let (has_string, has_number, has_boolean) =
        (has(Keyword::String, &flat), has(Keyword::Number, &flat), has(Keyword::Boolean, &flat));
    flat.retain(|m| match m {
        Ty::Literal { kind: LiteralKind::String, .. } => !has_string,
        Ty::Literal { kind: LiteralKind::Number, .. } => !has_number,
        Ty::Literal { kind: LiteralKind::Boolean, .. } => !has_boolean,
        _ => true,
    });
    match flat.len() {
        0 => NEVER,
        1 => flat.pop().unwrap_or(NEVER),
        _ => Ty::Union(flat),
    }
}

/// Removes repeated members, keeping the first of each (linear time: schemas may list thousands).
fn dedupe(list: Vec<Ty>) -> Vec<Ty> {
    if list.len() < 2 {
        return list;
    }
    let mut seen = HashSet::with_capacity(list.len());
    let keep: Vec<bool> = list.iter().map(|ty| seen.insert(ty)).collect();
    list.into_iter().zip(keep).filter_map(|(ty, keep)| keep.then_some(ty)).collect()
}

/// `a & b & ...`, simplified; all object members are merged into one object, placed where the
/// first one was.
pub(crate) fn intersection(members: Vec<Ty>) -> Ty {
    let mut flat: Vec<Ty> = Vec::with_capacity(members.len());
    let mut objects: Vec<Object> = Vec::new();
    let mut object_at = 0;
    for member in members.into_iter().flat_map(|m| match m {
        Ty::Intersection(inner) => inner,
        other => vec![other],
    }) {
        match member {
            Ty::Keyword(Keyword::Unknown) => {}
            Ty::Keyword(Keyword::Never) => return NEVER,
            Ty::Object(object) => {
                if objects.is_empty() {
                    object_at = flat.len();
                }
                objects.push(object);
            }
            other => flat.push(other),
        }
    }
    let mut flat = dedupe(flat);
    if let Some(object) = merge_objects(objects) {
        flat.insert(object_at.min(flat.len()), Ty::Object(object));
    }
    match flat.len() {
        0 => UNKNOWN,
        1 => flat.pop().unwrap_or(UNKNOWN),
        _ => Ty::Intersection(flat),
    }
}

/// Merges `a & b & ...` object members into one object.
///
/// A closed member closes the merge: under `allOf`, a member with `additionalProperties: false`
/// forbids every key it does not declare, whatever the other members say.
fn merge_objects(objects: Vec<Object>) -> Option<Object> {
    if objects.len() < 2 {
        return objects.into_iter().next();
    }
    let mut objects = objects.into_iter();
    let mut into = objects.next()?;
    let mut positions: HashMap<String, usize> =
        into.props.iter().enumerate().map(|(i, p)| (p.key.clone(), i)).collect();
    for from in objects {
        for prop in from.props {
            if let Some(&at) = positions.get(&prop.key) {
                let existing = &mut into.props[at];
                let left = std::mem::replace(&mut existing.ty, UNKNOWN);
                existing.ty = intersection(vec![left, prop.ty]);
                existing.optional &= prop.optional;
                if !existing.optional {
                    existing.greedy_id = None;
                }
            } else {
                positions.insert(prop.key.clone(), into.props.len());
                into.props.push(prop);
            }
        }
        into.index = match (into.index.take(), from.index) {
            (Some(a), Some(b)) => Some(Box::new(intersection(vec![*a, *b]))),
            (a, b) => a.or(b),
        };
        into.open &= from.open;
        into.explicit_open = into.open && (into.explicit_open || from.explicit_open);
        into.dropped |= from.dropped;
        into.declared |= from.declared;
    }
    Some(into)
}
