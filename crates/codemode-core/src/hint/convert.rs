//! JSON Schema (any JSON value) -> [`Ty`], bounded in depth and work.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::ir::{
    Keyword, LiteralKind, NEVER, Object, Prop, Tuple, TupleElement, Ty, UNKNOWN, intersection, union,
};

/// Hard bound on recursion through the schema (properties, items, combinators, `$ref` hops,
/// literal values). Deeper parts become `unknown`. Keeps the stack small on hostile input.
pub(crate) const MAX_NESTING: usize = 48;

/// Work bound: schema nodes visited per conversion, proportional to the character budget (almost
/// every node renders to at least one character) within these bounds. Past it, the rest becomes
/// `unknown`. Keeps `$ref` diamonds (exponential expansion) and huge schemas cheap.
const FUEL_PER_CHAR: usize = 8;
const MIN_FUEL: usize = 2_000;
const MAX_FUEL: usize = 20_000;

/// How much detail one conversion keeps; the degradation ladder lowers these.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Detail {
    /// Objects and arrays nested this many levels deep collapse to `object` / `unknown[]`.
    pub(crate) depth_limit: usize,
    /// Enums with more members than this collapse to their base types; `0` also collapses `const`.
    pub(crate) max_literals: usize,
    /// Optional properties: kept, or (greedy) dropped below the top level and made droppable one by
    /// one at the top level.
    pub(crate) greedy_optional: bool,
}

pub(crate) struct Converted {
    pub(crate) ty: Ty,
    /// Nothing was approximated: no collapse, cut, unresolved reference or unsupported construct.
    pub(crate) exact: bool,
    /// Number of greedy ids handed out.
    pub(crate) greedy_count: usize,
}

pub(crate) fn convert(schema: &Value, root: &Value, detail: Detail, max_chars: usize) -> Converted {
    let fuel = max_chars.saturating_mul(FUEL_PER_CHAR).clamp(MIN_FUEL, MAX_FUEL);
    let mut converter =
        Converter { root, detail, fuel, exact: true, ref_stack: vec![schema as *const Value], greedy: 0 };
    let ty = converter.schema(schema, 0, 0);
    Converted { ty, exact: converter.exact, greedy_count: converter.greedy }
}

struct Converter<'a> {
    root: &'a Value,
    detail: Detail,
    fuel: usize,
    exact: bool,
    /// Schemas being expanded through `$ref` (by address): a reference back into one is a cycle.
    ref_stack: Vec<*const Value>,
    greedy: usize,
}

impl<'a> Converter<'a> {
    /// Takes one unit of fuel; `false` (and inexact) when none is left.
    fn spend(&mut self) -> bool {
        if self.fuel == 0 {
            self.exact = false;
            return false;
        }
        self.fuel -= 1;
        true
    }

    fn inexact(&mut self) -> Ty {
        self.exact = false;
        UNKNOWN
    }

    /// `level`: enclosing objects/arrays; `nesting`: recursion depth.
    fn schema(&mut self, schema: &'a Value, level: usize, nesting: usize) -> Ty {
        if nesting >= MAX_NESTING || self.fuel == 0 {
            return self.inexact();
        }
        self.fuel -= 1;
        match schema {
            Value::Bool(true) => UNKNOWN,
            Value::Bool(false) => NEVER,
            Value::Object(map) => self.schema_object(map, level, nesting),
            _ => self.inexact(),
        }
    }

    fn schema_object(&mut self, map: &'a Map<String, Value>, level: usize, nesting: usize) -> Ty {
        let kw = &Keywords::read(map);
        let mut parts = Vec::new();
        if let Some(reference) = kw.reference {
            parts.push(self.reference(reference, level, nesting));
        }
        if let Some(own) = self.own_type(kw, level, nesting) {
            parts.push(own);
        }
        if let Some(all_of) = kw.all_of {
            match all_of.as_array() {
                Some(members) => {
                    // Past the work budget the remaining members are `unknown`, which an
                    // intersection ignores.
                    for member in members {
                        if self.fuel == 0 {
                            break;
                        }
                        parts.push(self.schema(member, level, nesting + 1));
                    }
                    if self.fuel == 0 {
                        self.exact = false;
                    }
                }
                None => self.exact = false,
            }
        }
        for any_of in [kw.any_of, kw.one_of].into_iter().flatten() {
            match any_of.as_array() {
                Some(members) => {
                    let mut converted = Vec::with_capacity(members.len().min(self.fuel + 1));
                    for member in members {
                        // Past the work budget a member is `unknown`, and so is the union.
                        let ty = self.schema(member, level, nesting + 1);
                        let stop = ty.is_unknown();
                        converted.push(ty);
                        if stop {
                            break;
                        }
                    }
                    parts.push(union(converted));
                }
                None => self.exact = false,
            }
        }
        let mut ty = intersection(parts);
        if kw.unevaluated_properties == Some(&Value::Bool(false))
            && let Ty::Object(object) = &mut ty
        {
            object.open = false;
            object.explicit_open = false;
        }
        if kw.nullable == Some(&Value::Bool(true)) {
            ty = union(vec![ty, Ty::Keyword(Keyword::Null)]);
        }
        ty
    }

    fn reference(&mut self, reference: &'a Value, level: usize, nesting: usize) -> Ty {
        let Some(target) = reference.as_str().and_then(|r| resolve_local(self.root, r)) else {
            return self.inexact();
        };
        let address = target as *const Value;
        if self.ref_stack.contains(&address) {
            return self.inexact();
        }
        self.ref_stack.push(address);
        let ty = self.schema(target, level, nesting + 1);
        self.ref_stack.pop();
        ty
    }

    /// The type from `const`, `enum`, `type` and the type-specific keywords; `None` when the schema
    /// says nothing about its own type (so it only contributes through `$ref` / combinators).
    fn own_type(&mut self, kw: &Keywords<'a>, level: usize, nesting: usize) -> Option<Ty> {
        let types = self.types(kw);
        if let Some(value) = kw.const_ {
            return Some(self.literals(std::slice::from_ref(value), types.as_deref(), nesting));
        }
        if let Some(values) = kw.enum_ {
            match values.as_array() {
                Some(values) => return Some(self.literals(values, types.as_deref(), nesting)),
                None => self.exact = false,
            }
        }
        let types = match types {
            Some(types) => types,
            None => {
                let objectish = kw.required.is_some()
                    || kw.properties.is_some()
                    || kw.additional_properties.is_some()
                    || kw.pattern_properties.is_some()
                    || kw.property_names.is_some();
                let arrayish =
                    kw.items.is_some() || kw.prefix_items.is_some() || kw.additional_items.is_some();
                match (objectish, arrayish) {
                    (false, false) => return None,
                    (true, false) => vec![JsonType::Object],
                    (false, true) => vec![JsonType::Array],
                    (true, true) => vec![JsonType::Object, JsonType::Array],
                }
            }
        };
        let members = types
            .iter()
            .map(|t| match t {
                JsonType::String => Ty::Keyword(Keyword::String),
                JsonType::Number | JsonType::Integer => Ty::Keyword(Keyword::Number),
                JsonType::Boolean => Ty::Keyword(Keyword::Boolean),
                JsonType::Null => Ty::Keyword(Keyword::Null),
                JsonType::Object => self.object(kw, level, nesting),
                JsonType::Array => self.array(kw, level, nesting),
                JsonType::Any => UNKNOWN,
            })
            .collect();
        Some(union(members))
    }

    /// The `type` keyword, if present and understood.
    fn types(&mut self, kw: &Keywords<'_>) -> Option<Vec<JsonType>> {
        let mut types = Vec::new();
        match kw.type_? {
            Value::String(name) => types.push(self.json_type(name)),
            Value::Array(names) => {
                for name in names {
                    match name.as_str() {
                        Some(name) => types.push(self.json_type(name)),
                        None => self.exact = false,
                    }
                }
            }
            _ => {
                self.exact = false;
                return None;
            }
        }
        Some(types)
    }

    fn json_type(&mut self, name: &str) -> JsonType {
        match name {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "null" => JsonType::Null,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "any" => JsonType::Any,
            _ => {
                self.exact = false;
                JsonType::Any
            }
        }
    }

    /// `const` / `enum` values that match `types` (all of them without `type`), as a literal union.
    fn literals(&mut self, values: &'a [Value], types: Option<&[JsonType]>, nesting: usize) -> Ty {
        if values.len() > self.fuel {
            // More values than the work budget: only their base types, found without allocating.
            self.exact = false;
            let mut kinds: Vec<Ty> = Vec::new();
            for value in values {
                if types.is_none_or(|types| types.iter().any(|t| t.admits(value))) {
                    let kind = base_type(value);
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                }
            }
            return union(kinds);
        }
        let matching: Vec<&Value> =
            values.iter().filter(|v| types.is_none_or(|types| types.iter().any(|t| t.admits(v)))).collect();
        let collapse = self.detail.max_literals == 0
            || matching.len() > self.detail.max_literals.max(1)
            || matching.len() > self.fuel;
        if collapse && !matching.is_empty() {
            self.exact = false;
            return union(matching.iter().map(|v| base_type(v)).collect());
        }
        let members = matching.into_iter().map(|v| self.literal(v, nesting + 1)).collect();
        union(members)
    }

    fn literal(&mut self, value: &'a Value, nesting: usize) -> Ty {
        if nesting >= MAX_NESTING || self.fuel == 0 {
            self.exact = false;
            return base_type(value);
        }
        self.fuel -= 1;
        match value {
            Value::Null => Ty::Keyword(Keyword::Null),
            Value::Bool(b) => Ty::Literal { text: b.to_string(), kind: LiteralKind::Boolean },
            Value::Number(n) => Ty::Literal { text: n.to_string(), kind: LiteralKind::Number },
            Value::String(s) => Ty::Literal { text: super::quote(s), kind: LiteralKind::String },
            Value::Array(items) => Ty::Tuple(Tuple {
                elements: items
                    .iter()
                    .map(|item| TupleElement { ty: self.literal(item, nesting + 1), optional: false })
                    .collect(),
                rest: None,
            }),
            Value::Object(map) => Ty::Object(Object {
                props: map
                    .iter()
                    .map(|(key, item)| Prop {
                        key: key.clone(),
                        optional: false,
                        ty: self.literal(item, nesting + 1),
                        greedy_id: None,
                    })
                    .collect(),
                index: None,
                open: false,
                dropped: false,
                declared: true,
                explicit_open: false,
            }),
        }
    }

    fn object(&mut self, kw: &Keywords<'a>, level: usize, nesting: usize) -> Ty {
        if level >= self.detail.depth_limit {
            self.exact = false;
            return Ty::Keyword(Keyword::Object);
        }
        let required: Vec<&str> = match kw.required {
            None => Vec::new(),
            Some(Value::Array(names)) => {
                // More names than the work budget cannot all be shown: read only that many.
                if names.len() > self.fuel {
                    self.exact = false;
                }
                let names = &names[..names.len().min(self.fuel)];
                let mut seen = HashSet::with_capacity(names.len());
                let mut required = Vec::with_capacity(names.len());
                for name in names {
                    match name.as_str() {
                        Some(name) if seen.insert(name) => required.push(name),
                        Some(_) => {}
                        None => self.exact = false,
                    }
                }
                required
            }
            Some(_) => {
                self.exact = false;
                Vec::new()
            }
        };
        let required_set: HashSet<&str> = required.iter().copied().collect();

        let mut object = Object {
            props: Vec::new(),
            index: None,
            open: true,
            dropped: false,
            declared: false,
            explicit_open: false,
        };
        match kw.additional_properties.or(kw.unevaluated_properties) {
            None => {}
            Some(Value::Bool(true)) => object.explicit_open = true,
            Some(Value::Bool(false)) => object.open = false,
            Some(schema) => {
                let ty = self.schema(schema, level + 1, nesting + 1);
                if ty.is_unknown() {
                    object.explicit_open = true;
                } else {
                    object.open = false;
                    if !ty.is_never() {
                        object.index = Some(Box::new(ty));
                    }
                }
            }
        }
        if let Some(patterns) = kw.pattern_properties {
            match patterns.as_object() {
                Some(patterns) if patterns.keys().any(|p| matches_every_key(p)) => {
                    // TypeBox's `Type.Record(Type.String(), T)`: every key matches, so
                    // `additionalProperties` never applies. Exact with a single pattern; with more,
                    // a key matching several must satisfy all of them (the union is a superset).
                    if patterns.len() > 1 {
                        self.exact = false;
                    }
                    let ty =
                        union(patterns.values().map(|s| self.schema(s, level + 1, nesting + 1)).collect());
                    object.open = ty.is_unknown();
                    object.explicit_open &= object.open;
                    object.index = (!ty.is_unknown() && !ty.is_never()).then(|| Box::new(ty));
                }
                Some(patterns) if !patterns.is_empty() => {
                    // A pattern cannot be written as a TypeScript key type: widen to `string` keys.
                    self.exact = false;
                    if !object.open {
                        let mut members: Vec<Ty> =
                            patterns.values().map(|s| self.schema(s, level + 1, nesting + 1)).collect();
                        members.extend(object.index.take().map(|b| *b));
                        let ty = union(members);
                        if !ty.is_never() {
                            object.index = Some(Box::new(ty));
                        }
                    }
                }
                Some(_) => {}
                None => self.exact = false,
            }
        }

        if let Some(properties) = kw.properties {
            match properties.as_object() {
                Some(properties) => {
                    object.declared = true;
                    for (key, schema) in properties {
                        if self.fuel == 0 {
                            // Out of work budget: stop listing (marked like dropped properties).
                            self.exact = false;
                            object.dropped = true;
                            break;
                        }
                        let ty = self.schema(schema, level + 1, nesting + 1);
                        let optional = !required_set.contains(key.as_str());
                        object.props.push(Prop { key: key.clone(), optional, ty, greedy_id: None });
                    }
                }
                None => self.exact = false,
            }
        }
        // Required but undeclared: the value type is whatever undeclared keys may hold.
        let declared = kw.properties.and_then(Value::as_object);
        for name in required.iter().filter(|name| !declared.is_some_and(|d| d.contains_key(**name))) {
            if !self.spend() {
                break;
            }
            let ty = object.index.as_deref().cloned().unwrap_or(if object.open { UNKNOWN } else { NEVER });
            object.props.push(Prop { key: (*name).to_owned(), optional: false, ty, greedy_id: None });
        }

        if let Some(names) = kw.property_names {
            self.property_names(&mut object, names);
        }

        if self.detail.greedy_optional {
            if level == 0 {
                for prop in object.props.iter_mut().filter(|p| p.optional) {
                    prop.greedy_id = Some(self.greedy);
                    self.greedy += 1;
                }
            } else if object.props.iter().any(|p| p.optional) {
                self.exact = false;
                object.props.retain(|p| !p.optional);
                object.dropped = true;
            }
        }
        Ty::Object(object)
    }

    /// `propertyNames` listing every allowed key (`enum`/`const` of strings) turns the undeclared
    /// keys into optional properties and closes the object; `false` allows no key at all; any other
    /// form only constrains key spelling and is ignored.
    fn property_names(&mut self, object: &mut Object, names: &'a Value) {
        let listed: Option<Vec<&str>> = match names {
            Value::Bool(false) => Some(Vec::new()),
            Value::Object(map) => match (map.get("const"), map.get("enum")) {
                (Some(Value::String(name)), _) => Some(vec![name.as_str()]),
                (None, Some(Value::Array(values))) => values.iter().map(Value::as_str).collect(),
                _ => None,
            },
            _ => None,
        };
        let Some(listed) = listed else { return };
        if listed.len() > self.fuel {
            self.exact = false;
            return;
        }
        let value_ty = object.index.take().map(|b| *b).unwrap_or(if object.open { UNKNOWN } else { NEVER });
        let allowed: HashSet<&str> = listed.iter().copied().collect();
        object.props.retain(|p| allowed.contains(p.key.as_str()));
        if !value_ty.is_never() {
            let mut present: HashSet<String> = object.props.iter().map(|p| p.key.clone()).collect();
            for name in listed {
                if present.insert(name.to_owned()) {
                    if !self.spend() {
                        break;
                    }
                    object.props.push(Prop {
                        key: name.to_owned(),
                        optional: true,
                        ty: value_ty.clone(),
                        greedy_id: None,
                    });
                }
            }
        }
        object.open = false;
        object.explicit_open = false;
    }

    fn array(&mut self, kw: &Keywords<'a>, level: usize, nesting: usize) -> Ty {
        if level >= self.detail.depth_limit {
            self.exact = false;
            return Ty::Array(Box::new(UNKNOWN));
        }
        let (prefix, rest) = match (kw.prefix_items, kw.items) {
            (Some(Value::Array(prefix)), rest) => (Some(prefix), rest),
            (_, Some(Value::Array(prefix))) => (Some(prefix), kw.additional_items),
            (_, items) => (None, items),
        };
        let Some(prefix) = prefix else {
            return match rest {
                None => Ty::Array(Box::new(UNKNOWN)),
                Some(Value::Bool(false)) => Ty::Tuple(Tuple { elements: Vec::new(), rest: None }),
                Some(items) => Ty::Array(Box::new(self.schema(items, level + 1, nesting + 1))),
            };
        };
        let min_items = kw.min_items.and_then(Value::as_u64).unwrap_or(0);
        let max_items = kw.max_items.and_then(Value::as_u64);
        // Past the work budget the remaining elements are `unknown`: stop at the first one.
        let mut elements = Vec::with_capacity(prefix.len().min(self.fuel + 1));
        let mut truncated = false;
        for (i, item) in prefix.iter().enumerate() {
            let ty = self.schema(item, level + 1, nesting + 1);
            elements.push(TupleElement { ty, optional: (i as u64) >= min_items });
            if self.fuel == 0 && i + 1 < prefix.len() {
                self.exact = false;
                truncated = true;
                break;
            }
        }
        let closed_by_max = max_items.is_some_and(|max| max <= prefix.len() as u64);
        let rest = match rest {
            _ if truncated => Some(Box::new(UNKNOWN)),
            _ if closed_by_max => None,
            Some(Value::Bool(false)) => None,
            None => Some(Box::new(UNKNOWN)),
            Some(items) => {
                let ty = self.schema(items, level + 1, nesting + 1);
                if ty.is_never() { None } else { Some(Box::new(ty)) }
            }
        };
        Ty::Tuple(Tuple { elements, rest })
    }
}

/// The keywords the converter reads, collected in one pass over a schema object (one hash lookup
/// per keyword would dominate the conversion time).
#[derive(Default)]
struct Keywords<'a> {
    reference: Option<&'a Value>,
    type_: Option<&'a Value>,
    const_: Option<&'a Value>,
    enum_: Option<&'a Value>,
    all_of: Option<&'a Value>,
    any_of: Option<&'a Value>,
    one_of: Option<&'a Value>,
    nullable: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional_properties: Option<&'a Value>,
    unevaluated_properties: Option<&'a Value>,
    pattern_properties: Option<&'a Value>,
    property_names: Option<&'a Value>,
    items: Option<&'a Value>,
    prefix_items: Option<&'a Value>,
    additional_items: Option<&'a Value>,
    min_items: Option<&'a Value>,
    max_items: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn read(map: &'a Map<String, Value>) -> Self {
        let mut kw = Keywords::default();
        for (key, value) in map {
            let slot = match key.as_str() {
                "$ref" => &mut kw.reference,
                "type" => &mut kw.type_,
                "const" => &mut kw.const_,
                "enum" => &mut kw.enum_,
                "allOf" => &mut kw.all_of,
                "anyOf" => &mut kw.any_of,
                "oneOf" => &mut kw.one_of,
                "nullable" => &mut kw.nullable,
                "properties" => &mut kw.properties,
                "required" => &mut kw.required,
                "additionalProperties" => &mut kw.additional_properties,
                "unevaluatedProperties" => &mut kw.unevaluated_properties,
                "patternProperties" => &mut kw.pattern_properties,
                "propertyNames" => &mut kw.property_names,
                "items" => &mut kw.items,
                "prefixItems" => &mut kw.prefix_items,
                "additionalItems" => &mut kw.additional_items,
                "minItems" => &mut kw.min_items,
                "maxItems" => &mut kw.max_items,
                _ => continue,
            };
            *slot = Some(value);
        }
        kw
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Null,
    Object,
    Array,
    /// `"any"` (draft 3) or an unknown name.
    Any,
}

impl JsonType {
    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::Any, _) => true,
            (JsonType::String, Value::String(_)) => true,
            (JsonType::Number, Value::Number(_)) => true,
            (JsonType::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            (JsonType::Boolean, Value::Bool(_)) => true,
            (JsonType::Null, Value::Null) => true,
            (JsonType::Object, Value::Object(_)) => true,
            (JsonType::Array, Value::Array(_)) => true,
            _ => false,
        }
    }
}

/// Whether a `patternProperties` regex matches every string (the forms generators emit).
fn matches_every_key(pattern: &str) -> bool {
    matches!(pattern, "" | ".*" | "^.*" | ".*$" | "^.*$" | "(.*)" | "^(.*)" | "^(.*)$" | "^[\\s\\S]*$")
}

/// The keyword type a literal value belongs to.
fn base_type(value: &Value) -> Ty {
    match value {
        Value::Null => Ty::Keyword(Keyword::Null),
        Value::Bool(_) => Ty::Keyword(Keyword::Boolean),
        Value::Number(_) => Ty::Keyword(Keyword::Number),
        Value::String(_) => Ty::Keyword(Keyword::String),
        Value::Array(_) => Ty::Array(Box::new(UNKNOWN)),
        Value::Object(_) => Ty::Keyword(Keyword::Object),
    }
}

/// Resolves a same-document reference: `#` or `#/json/pointer` (with `~0`, `~1` and `%XX`
/// escapes). Anything else (remote documents, `$anchor` names, `$id`-relative references) is
/// `None`.
pub(crate) fn resolve_local<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let fragment = percent_decode(reference.strip_prefix('#')?)?;
    if fragment.is_empty() {
        return Some(root);
    }
    let mut target = root;
    for token in fragment.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        target = match target {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => {
                if token.len() > 1 && token.starts_with('0') {
                    return None;
                }
                items.get(token.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(target)
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
