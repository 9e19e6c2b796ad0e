//! Generated TypeScript programs for the differential oracle (`cargo xtask ts-oracle`).
//!
//! Each program is a Code Mode cell that pushes observations into `out` and returns it. The units
//! target what type stripping gets wrong when it is wrong: class expressions with heritage clauses
//! and members, `as`/`satisfies`/`!`/`<T>`/type arguments (also instantiation expressions) next to
//! every binary and unary operator, the conditional and `<=`, enum declarations (merged, shadowed,
//! computed, self-named, keyword-named members), auto-accessors, type-parameter edge cases, and
//! arrow return types across lines. Every observation is wrapped so
//! that a run-time error becomes a value (`"threw TypeError"`) instead of ending the program, and
//! the whole program is compared with what `typescript@5`'s `transpileModule` output does.

/// A deterministic pseudo-random source (xorshift64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const BINARY: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "**",
    "<<",
    ">>",
    ">>>",
    "&",
    "|",
    "^",
    "==",
    "!=",
    "===",
    "!==",
    "<",
    ">",
    "<=",
    ">=",
    "&&",
    "||",
    "??",
    "in",
    "instanceof",
    ",",
];

const UNARY: &[&str] = &["-", "+", "!", "~", "typeof ", "void ", "await "];

/// Type erasures written after an operand.
const POSTFIX_TYPES: &[&str] = &[
    " as number",
    " as any",
    " satisfies number",
    " as unknown as number",
    "!",
    " as const",
    " as I",
    " satisfies Array<any>",
];

/// Instantiation expressions (type arguments without a call) of values that are not functions.
const INSTANTIATED: &[&str] = &["x<number>", "s<string>", "o<any>", "o.n<number>"];

const OPERANDS: &[&str] = &["2", "3", "x", "y", "(x)", "o.n", "f(1)", "s", "-1", "0", "NaN"];

fn operand(rng: &mut Rng) -> String {
    rng.pick(OPERANDS).to_owned()
}

/// `a OP1 b <type> OP2 c` and friends.
fn operator_unit(rng: &mut Rng, i: usize) -> String {
    let (a, b, c) = (operand(rng), operand(rng), operand(rng));
    let op1 = rng.pick(BINARY);
    let op2 = rng.pick(BINARY);
    let ty = rng.pick(POSTFIX_TYPES);
    let expr = match rng.below(11) {
        0 => format!("{a} {op1} {b}{ty} {op2} {c}"),
        // An instantiation expression next to an operator (`x<T> in o`). Of a value that is not a
        // function: a function's source text differs once its types are blanked.
        9 => format!("{} {op1} {b}", rng.pick(INSTANTIATED)),
        10 => format!("{a} {op1} {} {op2} {c}", rng.pick(INSTANTIATED)),
        1 => format!("{a}{ty} {op1} {b}"),
        2 => format!("{a} {op1} {b}{ty}"),
        3 => format!("{}{a}{ty} {op1} {b}", rng.pick(UNARY)),
        4 => format!("<number>{a} {op1} {b}"),
        5 => format!("{a} {op1} <any>{b} {op2} {c}"),
        6 => format!("id<number>({a}) {op1} {b}{ty}"),
        7 => format!("({a} {op1} {b}){ty} {op2} {c}"),
        _ => format!("{a} {op1} {b}{ty}{} {op2} {c}", rng.pick(POSTFIX_TYPES)),
    };
    format!("out.push(await probe{i}(async () => {expr}))")
}

fn unary_unit(rng: &mut Rng, i: usize) -> String {
    let a = operand(rng);
    let ty = rng.pick(POSTFIX_TYPES);
    let expr = match rng.below(6) {
        0 => format!("{}{a}{ty}", rng.pick(UNARY)),
        1 => format!("{}({a}{ty})", rng.pick(UNARY)),
        2 => format!("{}<number>{a}", rng.pick(UNARY)),
        // A space between the operators: `- -x`, never `--x`.
        3 => format!("{} {}{a}{ty}", rng.pick(UNARY), rng.pick(UNARY)),
        4 => format!("{a}{ty} ? {}{a} : {a}{ty}", rng.pick(UNARY)),
        _ => format!("(x{ty}) = {a}{ty}, x"),
    };
    format!("out.push(await probe{i}(async () => {expr}))")
}

fn heritage(rng: &mut Rng) -> String {
    let mut h = String::new();
    if rng.chance(50) {
        h.push_str(rng.pick(&[
            " extends Base",
            " extends Base<number>",
            " extends (Base)",
            " extends mixin(Base)",
        ]));
    }
    if rng.chance(70) {
        h.push_str(rng.pick(&[" implements I", " implements I, J<string>", " implements I /* c */"]));
    }
    h
}

fn member(rng: &mut Rng, k: usize) -> String {
    match rng.below(12) {
        0 => format!("v{k} = {k}"),
        1 => format!("v{k}: number = {k}"),
        2 => format!("readonly v{k}?: number = {k}"),
        3 => format!("static s{k}: string = \"s{k}\""),
        4 => format!("m{k}(a: number): number {{ return a + {k} }}"),
        5 => format!("get g{k}(): number {{ return {k} }}"),
        6 => format!("set g{k}(v: number) {{ this.v{k} = v }}"),
        7 => format!("accessor a{k}: number = {k}"),
        8 => format!("static accessor sa{k} = {k}"),
        9 => format!("declare d{k}: number"),
        10 => "[key: string]: any".to_owned(),
        _ => format!("private p{k}!: number"),
    }
}

fn class_unit(rng: &mut Rng, i: usize) -> String {
    let members: Vec<String> = (0..rng.below(4)).map(|k| member(rng, k)).collect();
    let body = members.join(rng.pick(&["; ", "\n", ";\n"]));
    let h = heritage(rng);
    let tp = rng.pick(&["", "<T>", "<T extends object = {}>"]);
    let class = match rng.below(5) {
        0 => format!("class{h} {{ {body} }}"),
        1 => format!("class K{i}{tp}{h} {{ {body} }}"),
        2 => format!("class{tp}{h}\n{{ {body} }}"),
        3 => format!("class {tp} {h} {{\n{body}\n}}"),
        _ => format!("class{h}{{{body}}}"),
    };
    let make = match rng.below(4) {
        0 => format!("const C{i} = {class}"),
        1 => format!("const C{i} = (() => {class})()"),
        2 => format!("const mk{i} = () => {class}\nconst C{i} = mk{i}()"),
        _ => format!("const C{i} = [{class}][0]"),
    };
    format!("{make}\nout.push(typeof C{i}, await probe{i}(async () => describe(new (C{i} as any)())))")
}

const ENUM_NAMES: &[&str] =
    &["A", "B", "X", "Y", "await", "yield", "delete", "Foo", "E", "\"q r\"", "['c']", "new"];

fn enum_initializer(rng: &mut Rng, enum_name: &str, earlier: &[String]) -> String {
    let r = if earlier.is_empty() { "1".to_owned() } else { earlier[rng.below(earlier.len())].clone() };
    let qualified = if earlier.is_empty() { "2".to_owned() } else { format!("{enum_name}.{r}") };
    match rng.below(17) {
        0 | 1 => String::new(),
        2 => format!(" = {}", rng.below(5)),
        3 => " = \"str\"".to_owned(),
        4 => format!(" = {r} + 1"),
        5 => format!(" = {qualified}"),
        6 => " = `t`".to_owned(),
        7 => " = `t${1}`".to_owned(),
        8 => " = outer".to_owned(),
        9 => " = outer as string".to_owned(),
        10 => " = sOuter + 1".to_owned(),
        11 => format!(" = ({r})"),
        12 if !earlier.is_empty() => format!(" = {r}.toString()"),
        13 => " = -1".to_owned(),
        14 => format!(" = {r} << 2 | 1"),
        // Only members: `E["missing"]` makes tsc type-check the enum early and skip folding
        // later declarations (an order-dependent quirk of the compiler, not of the language).
        15 if !earlier.is_empty() => format!(" = {enum_name}[\"{r}\"]"),
        _ => {
            let local = if r == "1" { "Z".to_owned() } else { r.clone() };
            format!(" = (() => {{ const {local} = 5; return {local} }})()")
        }
    }
}

fn enum_unit(rng: &mut Rng, i: usize) -> String {
    let name = if rng.chance(20) { "Foo".to_owned() } else { format!("En{i}") };
    let mut out = String::new();
    let shadow = rng.chance(40);
    if shadow {
        out.push_str(&format!("const {} = 10\n", rng.pick(&["X", "A", "Y"])));
    }
    let is_const = name != "Foo" && rng.chance(20);
    let mut earlier: Vec<String> = Vec::new();
    let mut all: Vec<String> = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let mut members = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let m = rng.pick(ENUM_NAMES).to_owned();
            if all.contains(&m) {
                continue;
            }
            members.push(format!("{m}{}", enum_initializer(rng, &name, &earlier)));
            let referable = m.chars().all(|c| c.is_ascii_alphanumeric())
                && !matches!(m.as_str(), "await" | "yield" | "delete" | "new");
            if referable {
                earlier.push(m.clone());
            }
            all.push(m);
        }
        let sep = rng.pick(&[", ", ",\n", ", "]);
        let trailing = rng.pick(&["", ","]);
        // `const enum` and `enum` of one name do not merge (a TypeScript error): one kind per name.
        let konst = if is_const { "const " } else { "" };
        out.push_str(&format!("{konst}enum {name} {{ {}{trailing} }}\n", members.join(sep)));
    }
    let body = format!("{out}out.push(describe({name}))");
    // A `const` of its own goes in a block, so that two units never declare the same name in one
    // scope (an early error in JavaScript that transpileModule does not report); so does `Foo`,
    // the one enum name units share, so that two units never merge into an enum that declares a
    // member twice (a TypeScript error, "Duplicate identifier", whose output tsc leaves unspecified).
    if shadow || name == "Foo" || rng.chance(30) { format!("{{\n{body}\n}}") } else { body }
}

fn type_params_unit(rng: &mut Rng, i: usize) -> String {
    let tp = rng.pick(&[
        "<T>",
        "<T,>",
        "<const T>",
        "<const T extends readonly unknown[]>",
        "<in out T>",
        "<T = string>",
        "<T extends keyof U, U>",
        "<T extends (x: number) => void>",
        "<T extends { a: <U>(u: U) => U }>",
    ]);
    match rng.below(5) {
        0 => format!("function tp{i}{tp}(x: any): any {{ return x }}\nout.push(tp{i}<any>({i}))"),
        1 => format!("const tp{i} = {tp}(x: any): any => x\nout.push(tp{i}({i}))"),
        2 => format!("const tp{i} = async {tp}(x: any): Promise<any> => x\nout.push(await tp{i}({i}))"),
        3 => format!("class TP{i}{tp} {{ m{tp}(x: any) {{ return x }} }}\nout.push(new TP{i}<any>().m({i}))"),
        _ => format!("type TA{i}{tp} = any\ninterface TI{i}{tp} {{ x: any }}\nout.push({i} as TA{i}<any>)"),
    }
}

fn arrow_unit(rng: &mut Rng, i: usize) -> String {
    let ret = rng.pick(&[
        ": {\n  v: number\n}",
        ": Promise<\n  number\n>",
        ":\n  number",
        ": [\n  number,\n  string\n]",
        ": (\n  | number\n  | string\n)",
        ": {\n  v: number } /* c */",
    ]);
    let asyncness = if ret.contains("Promise") { "async " } else { "" };
    let value = if ret.contains('v') {
        "({ v: a })"
    } else if ret.contains('[') {
        "[a, 's']"
    } else {
        "a"
    };
    let params =
        rng.pick(&["(a: number)", "(a: number = 1)", "(a: number, ...rest: any[])", "(\n  a: number\n)"]);
    let tp = rng.pick(&["", "<T>", "<const T,>"]);
    let body = if rng.chance(50) { value.to_owned() } else { format!("{{ return {value} }}") };
    format!("const ar{i} = {asyncness}{tp}{params}{ret} => {body}\nout.push(await ar{i}({i}))")
}

/// A generated program; `seed` picks it.
pub fn program(seed: u64) -> String {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03);
    let mut source = String::from(PRELUDE);
    let units = 1 + rng.below(6);
    for i in 0..units {
        source.push_str(&format!(
            "const probe{i} = async (f: () => unknown): Promise<unknown> => {{ try {{ return await f() }} catch (e: any) {{ return 'threw ' + e?.name }} }}\n"
        ));
        let unit = match rng.below(6) {
            0 => operator_unit(&mut rng, i),
            1 => unary_unit(&mut rng, i),
            2 => class_unit(&mut rng, i),
            3 => enum_unit(&mut rng, i),
            4 => type_params_unit(&mut rng, i),
            _ => arrow_unit(&mut rng, i),
        };
        source.push_str(&unit);
        source.push_str(rng.pick(&["\n", ";\n", "\n\n"]));
    }
    source.push_str("return out\n");
    source
}

/// Definitions every generated program starts with.
const PRELUDE: &str = r#"const out: unknown[] = []
let x: any = 5, y: number = 7
const s: string = "k", o = { n: 4 }
const outer = "o", sOuter = "so"
function f(n: number): number { return n * 10 }
function id<T>(v: T): T { return v }
interface I { } interface J<T> { }
class Base<T = unknown> { b = 1 }
const mixin = <T extends new (...a: any[]) => object>(B: T) => class extends B { m = 2 }
function describe(v: any): unknown {
  if (v === null || typeof v !== "object") return typeof v === "number" && !Number.isFinite(v) ? String(v) : v
  const own: Record<string, unknown> = {}
  for (const k of Object.getOwnPropertyNames(v)) own[k] = typeof v[k] === "function" ? "fn" : v[k]
  let p = Object.getPrototypeOf(v)
  while (p && p !== Object.prototype) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== "constructor" && !(k in own)) {
      try { own[k] = typeof v[k] === "function" ? "fn" : v[k] } catch (e: any) { own[k] = "threw " + e?.name }
    }
    p = Object.getPrototypeOf(p)
  }
  return own
}
"#;
