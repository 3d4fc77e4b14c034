//! `#[crew::main]` and `#[crew::test]`: the attribute macros of the
//! [crew](https://docs.rs/crew) executor. Use them through crew (its default `macros` feature
//! re-exports them); this crate is not meant to be a dependency of its own.
//!
//! Invariants:
//! - Every option is checked here, at compile time: an unknown or repeated name, a value of the
//!   wrong kind, or an out-of-range worker count is a compile error pointing at it, naming what
//!   is accepted. What only the running program can check (a stack size the OS refuses, say)
//!   fails with crew's own `BuildError`, naming the value.
//! - The expansion names crew by an absolute path (`::crew`, or the `crate = "..."` option), so
//!   it works wherever crew is reachable under that name.
//! - `#[crew::main]` configures the global pool only when given options; without them the
//!   program starts the global pool as any `crew::spawn` would (`CREW_WORKERS` and friends).
//! - `#[crew::test]` runs the body on a pool of its own, through `Pool::block_on`, so the
//!   body's `crew::spawn` calls land on that pool; the pool is checked for leftover tasks and
//!   dropped when the body returns (see crew's docs of the attribute). With `seed` or `seeds`,
//!   the body runs as a task of a seeded pool, one pool per seed (`__private::seeded_test`).

#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, MetaNameValue, Token};

/// Runs an `async fn main` on crew: its body is driven by `crew::block_on` on the main thread,
/// and what it spawns goes to the global pool.
///
/// ```
/// #[crew::main]
/// async fn main() {
///     let answer = crew::spawn(async { 6 * 7 }).await;
///     assert_eq!(answer, 42);
/// }
/// ```
///
/// Without options, the global pool starts as the first `crew::spawn` starts it (`CREW_WORKERS`
/// and the other `CREW_` variables apply). With options, the expansion first configures it with
/// `crew::Builder::build_global`, and panics with crew's error (naming the setting and value) if
/// it cannot start:
///
/// ```
/// #[crew::main(workers = 4, thread_name = "api", takeover_after_ms = 20)]
/// async fn main() {
///     let name = crew::spawn(async { std::thread::current().name().unwrap().to_owned() }).await;
///     assert!(name.starts_with("api-"));
/// }
/// ```
///
/// Options (each at most once; literals only, checked at compile time):
///
/// | option | value | `Builder` call |
/// |---|---|---|
/// | `workers` | `1..=1024` | `workers(n)` |
/// | `thread_name` | a string | `thread_name(s)` |
/// | `stack_size` | bytes | `stack_size(n)` |
/// | `takeover` | `true`/`false` | `takeover(b)` |
/// | `takeover_after_ms` | milliseconds | `takeover_after(Duration::from_millis(n))` |
/// | `max_stuck_threads` | a whole number | `max_stuck_threads(n)` |
/// | `drive_reactor` | `true`/`false` | none: accepted and ignored (deprecated; workers always turn crew's driver) |
/// | `task_dump` | `true`/`false` | `task_dump(b)` |
/// | `crate` | a path, as a string | where crew is, if re-exported under another name |
///
/// It goes on an `async fn` with no arguments and no generics, and may return anything `main`
/// may (a `Result`, say). Any function may carry it, not only `main`: without options it then
/// runs its body to completion each time it is called; with options, a second call panics, as
/// the global pool is configured once per process.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_or_report(Kind::Main, args.into(), item.into()).into()
}

/// Runs an `async fn` test on crew, on a pool of its own that is checked for leftover tasks and
/// dropped when the test ends.
///
/// ```
/// #[crew::test]
/// async fn doubles() {
///     assert_eq!(crew::spawn(async { 2 * 2 }).await, 4);
/// }
/// # fn main() {}
/// ```
///
/// - **Its own pool.** Each test builds a private pool (2 workers, threads named after the
///   test, the task dump on) and runs its body with `Pool::block_on` on the test's thread. So
///   every `crew::spawn` of the body, of its tasks and of the libraries they call, lands on that
///   pool, never on the global pool or on another test's pool: tests running in parallel do not
///   share workers, and a test's panic report names its threads.
/// - **Checked for leftovers.** When the body returns, the pool is given time to settle (tasks
///   still running or queued may end or start waiting; one that does neither for 10 seconds is
///   reported as it is): it has settled when two looks 5 ms apart find the same tasks, all
///   waiting for a wake, with the same poll counts. Every task still alive then is a leftover:
///   spawned, neither awaited nor finished. The pool is shut down, which drops the leftovers
///   (what their destructors spawn with `crew::spawn` goes to the global pool), and the test
///   fails with a table of them (id, name, state, polls, age, spawn location). A task stuck
///   forever inside one poll is reported too, its thread left behind, never waited for.
///   `leftovers = "drop"` keeps the dropping and skips the check, as `#[tokio::test]` does.
/// - A panic of the body fails the test with the body's message (the pool is dropped on the
///   way out); a test may return a `Result` (an `Err` fails the test as itself, leftovers or
///   not), and may carry `#[should_panic]`, `#[ignore]` and the other test attributes (but not
///   a second `#[test]`). Under a `#[should_panic]` that names no `expected` message, leftovers
///   are dropped without failing the test: their report would satisfy it whatever the body did.
///
/// Options: those of `#[crew::main]` that configure a pool (`workers`, `thread_name`,
/// `stack_size`, `takeover`, `takeover_after_ms`, `max_stuck_threads`, `drive_reactor`,
/// `crate`), `leftovers = "fail"` (the default) or `"drop"`, `unhandled_panic = "ignore"` (the
/// default) or `"shutdown_pool"` (`Builder::unhandled_panic`: a panic no awaiter sees, a detached
/// task's say, shuts the pool down and fails the test naming the task; not with `seed`), and for
/// tests that control time (crew's `docs/testing.md`):
///
/// - `start_paused = true`: the test's pool starts with its clock paused
///   (`Builder::start_paused`): its timers fire when nothing else can run, at once in real time.
/// - `seed = s`: the body runs as a task of a seeded pool (`Builder::seed`: one worker, the order
///   of its tasks drawn from `s`, the clock paused), not on the test's thread; the body and its
///   output must be `Send`. `seeds = n` runs it under seeds `0..n`, a fresh pool each, and stops
///   at the first that fails, naming the seed; `CREW_TEST_SEED=s` reruns seed `s` alone. With
///   either, `workers` (but `1`), `takeover = true`, `takeover_after_ms` and `start_paused =
///   false` are compile errors.
///
/// ```
/// #[crew::test(seeds = 20)]
/// async fn every_interleaving_adds_up() {
///     let (a, b) = (crew::spawn(async { 1 }), crew::spawn(async { 2 }));
///     assert_eq!(a.await + b.await, 3);
/// }
/// # fn main() {}
/// ```
///
/// ```
/// #[crew::test(workers = 1, leftovers = "drop")]
/// async fn leaves_a_listener_running() {
///     crew::spawn(std::future::pending::<()>()).detach(); // dropped with the test's pool
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_or_report(Kind::Test, args.into(), item.into()).into()
}

/// The expansion, or the error followed by a stand-in for the item, so that the error is the
/// only one reported (no "`main` function not found" after it).
fn expand_or_report(kind: Kind, args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    match expand(kind, args, item.clone()) {
        Ok(expanded) => expanded,
        Err(error) => {
            let mut report = error.into_compile_error();
            report.extend(stand_in(item));
            report
        }
    }
}

/// A function of the same name and return type as `item`, plain and never run; or `item`
/// itself if it is no function.
fn stand_in(item: TokenStream2) -> TokenStream2 {
    let Ok(function) = syn::parse2::<ItemFn>(item.clone()) else { return item };
    let attrs = function.attrs.iter().filter(|attr| !attr.path().is_ident("test"));
    let vis = &function.vis;
    let name = &function.sig.ident;
    let output = &function.sig.output;
    quote! {
        #(#attrs)*
        #[allow(dead_code)]
        #vis fn #name() #output { ::core::unreachable!() }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Main,
    Test,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Main => "#[crew::main]",
            Kind::Test => "#[crew::test]",
        }
    }

    /// The options this attribute takes, as the error for an unknown one lists them.
    fn options(self) -> &'static [&'static str] {
        match self {
            Kind::Main => &[
                "workers",
                "thread_name",
                "stack_size",
                "takeover",
                "takeover_after_ms",
                "max_stuck_threads",
                "drive_reactor",
                "task_dump",
                "crate",
            ],
            Kind::Test => &[
                "workers",
                "thread_name",
                "stack_size",
                "takeover",
                "takeover_after_ms",
                "max_stuck_threads",
                "drive_reactor",
                "leftovers",
                "unhandled_panic",
                "start_paused",
                "seed",
                "seeds",
                "crate",
            ],
        }
    }
}

/// What the options ask for.
struct Options {
    /// `Builder` method calls, in the order given.
    builder: Vec<TokenStream2>,
    /// Whether `workers` was given (a test's pool has 2 workers otherwise).
    workers: bool,
    /// Whether `thread_name` was given (a test's pool is named after the test otherwise).
    thread_name: bool,
    /// `#[crew::test]`: fail the test on leftover tasks (`leftovers = "fail"`, the default).
    fail_on_leftovers: bool,
    /// `#[crew::test(unhandled_panic = "shutdown_pool")]`: its span.
    shutdown_pool: Option<Span>,
    /// `#[crew::test(seed = s)]` or `(seeds = n)`: the number, whether it counts seeds
    /// (`seeds`, expanded to `__private::Seeds::Count`) or is one (`Seeds::One`), and its span.
    seeds: Option<(u64, bool, Span)>,
    /// The settings a seeded test cannot take, as given: (name, span).
    not_with_seed: Vec<(String, Span)>,
    /// The path crew is reachable by.
    krate: syn::Path,
}

/// The most workers a pool may have (crew's `MAX_WORKERS`).
const MAX_WORKERS: u64 = 1024;

fn parse_options(kind: Kind, args: TokenStream2) -> syn::Result<Options> {
    let pairs = Punctuated::<MetaNameValue, Token![,]>::parse_terminated.parse2(args).map_err(|error| {
        syn::Error::new(
            error.span(),
            format!(
                "{}: options are `name = value` pairs separated by commas, as in `workers = 4` ({error})",
                kind.attribute()
            ),
        )
    })?;
    let mut options = Options {
        builder: Vec::new(),
        workers: false,
        thread_name: false,
        fail_on_leftovers: true,
        shutdown_pool: None,
        seeds: None,
        not_with_seed: Vec::new(),
        krate: syn::parse_quote!(::crew),
    };
    let mut seen: Vec<String> = Vec::new();
    for pair in pairs {
        let name = pair.path.to_token_stream().to_string();
        if !kind.options().contains(&name.as_str()) {
            let hint = match (kind, name.as_str()) {
                (Kind::Test, "task_dump") => " (a test's pool always keeps the task dump: the leftover check reads it)",
                (Kind::Main, "leftovers") => " (`leftovers` is #[crew::test]'s)",
                (Kind::Main, "start_paused" | "seed" | "seeds") => {
                    " (the global pool keeps real time and its own order: this is #[crew::test]'s)"
                }
                _ => "",
            };
            return Err(syn::Error::new_spanned(
                &pair.path,
                format!(
                    "{}: unknown option `{name}`{hint}; expected one of: {}",
                    kind.attribute(),
                    kind.options().join(", ")
                ),
            ));
        }
        if seen.contains(&name) {
            return Err(syn::Error::new_spanned(&pair.path, format!("{}: `{name}` is given twice", kind.attribute())));
        }
        seen.push(name.clone());
        let value = &pair.value;
        let span = value.span();
        match name.as_str() {
            "workers" => {
                let workers = int(kind, &name, value, "a whole number of worker threads, as in `workers = 4`")?;
                if !(1..=MAX_WORKERS).contains(&workers) {
                    return Err(syn::Error::new_spanned(
                        value,
                        format!(
                            "{}: `workers = {workers}` is out of range; expected 1..={MAX_WORKERS}",
                            kind.attribute()
                        ),
                    ));
                }
                if workers != 1 {
                    options.not_with_seed.push((format!("workers = {workers}"), span));
                }
                let workers = workers as usize;
                options.builder.push(quote_spanned!(span=> .workers(#workers)));
                options.workers = true;
            }
            "thread_name" => {
                let prefix = string(kind, &name, value, "a thread name prefix, as in `thread_name = \"api\"`")?;
                options.builder.push(quote_spanned!(span=> .thread_name(#prefix)));
                options.thread_name = true;
            }
            "stack_size" => {
                let bytes = int(kind, &name, value, "a size in bytes, as in `stack_size = 4194304`")? as usize;
                options.builder.push(quote_spanned!(span=> .stack_size(#bytes)));
            }
            "max_stuck_threads" => {
                let threads =
                    int(kind, &name, value, "a whole number of threads, as in `max_stuck_threads = 4`")? as usize;
                options.builder.push(quote_spanned!(span=> .max_stuck_threads(#threads)));
            }
            "takeover_after_ms" => {
                let ms = int(kind, &name, value, "milliseconds, as in `takeover_after_ms = 20`")?;
                options.not_with_seed.push((format!("takeover_after_ms = {ms}"), span));
                options.builder.push(quote_spanned!(span=> .takeover_after(::core::time::Duration::from_millis(#ms))));
            }
            // A no-op since crew's own driver (workers always turn it): accepted, and nothing.
            "drive_reactor" => {
                boolean(kind, &name, value)?;
            }
            "takeover" | "task_dump" | "start_paused" => {
                let on = boolean(kind, &name, value)?;
                // What a seeded pool cannot take: takeover or reactor driving on, the clock not paused.
                let refused_with_seed = match name.as_str() {
                    "start_paused" => !on,
                    "task_dump" => false,
                    _ => on,
                };
                if refused_with_seed {
                    options.not_with_seed.push((format!("{name} = {on}"), span));
                }
                let method = syn::Ident::new(&name, span);
                options.builder.push(quote_spanned!(span=> .#method(#on)));
            }
            "seed" | "seeds" => {
                let expected =
                    if name == "seed" { "a seed, as in `seed = 17`" } else { "a number of seeds, as in `seeds = 100`" };
                let number = int(kind, &name, value, expected)?;
                if name == "seeds" && number == 0 {
                    return Err(syn::Error::new_spanned(
                        value,
                        format!("{}: `seeds = 0` runs the test under no seed; expected 1 or more", kind.attribute()),
                    ));
                }
                if options.seeds.is_some() {
                    return Err(syn::Error::new_spanned(
                        &pair.path,
                        format!("{}: give `seed` or `seeds`, not both", kind.attribute()),
                    ));
                }
                options.seeds = Some((number, name == "seeds", span));
            }
            "leftovers" => {
                let policy = string(kind, &name, value, "`\"fail\"` or `\"drop\"`")?;
                options.fail_on_leftovers = match policy.as_str() {
                    "fail" => true,
                    "drop" => false,
                    other => {
                        return Err(syn::Error::new_spanned(
                            value,
                            format!("{}: `leftovers = \"{other}\"`; expected \"fail\" or \"drop\"", kind.attribute()),
                        ))
                    }
                };
            }
            "unhandled_panic" => {
                let policy = string(kind, &name, value, "`\"ignore\"` or `\"shutdown_pool\"`")?;
                match policy.as_str() {
                    "ignore" => {}
                    "shutdown_pool" => {
                        options.not_with_seed.push(("unhandled_panic = \"shutdown_pool\"".to_owned(), span));
                        options.shutdown_pool = Some(span);
                    }
                    other => {
                        return Err(syn::Error::new_spanned(
                            value,
                            format!(
                                "{}: `unhandled_panic = \"{other}\"`; expected \"ignore\" or \"shutdown_pool\"",
                                kind.attribute()
                            ),
                        ))
                    }
                }
            }
            "crate" => {
                let path = string(kind, &name, value, "a path, as in `crate = \"my_reexport::crew\"`")?;
                options.krate = syn::parse_str(&path).map_err(|_| {
                    syn::Error::new_spanned(value, format!("{}: `crate = \"{path}\"` is not a path", kind.attribute()))
                })?;
            }
            _ => unreachable!("every listed option is handled"),
        }
    }
    if let (Some(_), Some((setting, span))) = (options.seeds, options.not_with_seed.first()) {
        return Err(syn::Error::new(
            *span,
            format!(
                "{}: `{setting}` cannot go with `seed`/`seeds`: a seeded test runs on one worker, with no takeover, \
                 no reactor driving and its clock paused",
                kind.attribute()
            ),
        ));
    }
    Ok(options)
}

fn literal(value: &Expr) -> Option<&Lit> {
    match value {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        _ => None,
    }
}

fn int(kind: Kind, name: &str, value: &Expr, expected: &str) -> syn::Result<u64> {
    match literal(value) {
        Some(Lit::Int(int)) => int.base10_parse::<u64>(),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("{}: `{name}` takes {expected}, not `{}`", kind.attribute(), value.to_token_stream()),
        )),
    }
}

fn string(kind: Kind, name: &str, value: &Expr, expected: &str) -> syn::Result<String> {
    match literal(value) {
        Some(Lit::Str(string)) => Ok(string.value()),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("{}: `{name}` takes {expected}, not `{}`", kind.attribute(), value.to_token_stream()),
        )),
    }
}

fn boolean(kind: Kind, name: &str, value: &Expr) -> syn::Result<bool> {
    match literal(value) {
        Some(Lit::Bool(on)) => Ok(on.value),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("{}: `{name}` takes `true` or `false`, not `{}`", kind.attribute(), value.to_token_stream()),
        )),
    }
}

fn expand(kind: Kind, args: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let function: ItemFn = syn::parse2(item.clone())
        .map_err(|_| syn::Error::new(Span::call_site(), format!("{} goes on an `async fn`", kind.attribute())))?;
    let options = parse_options(kind, args)?;
    let signature = &function.sig;
    if signature.asyncness.is_none() {
        return Err(syn::Error::new(
            signature.fn_token.span(),
            format!("{} goes on an `async fn`: add `async` before `fn`", kind.attribute()),
        ));
    }
    if !signature.inputs.is_empty() {
        return Err(syn::Error::new_spanned(
            &signature.inputs,
            format!("{} takes a function with no arguments", kind.attribute()),
        ));
    }
    if !signature.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &signature.generics,
            format!("{} takes a function with no generic parameters", kind.attribute()),
        ));
    }
    if kind == Kind::Test {
        if let Some(test) = function.attrs.iter().find(|attr| attr.path().is_ident("test")) {
            return Err(syn::Error::new_spanned(
                test,
                "#[crew::test] adds #[test] itself: remove this one (it would run the test twice)",
            ));
        }
    }
    let attrs = &function.attrs;
    let vis = &function.vis;
    let name = &signature.ident;
    let output = &signature.output;
    let body = &function.block;
    let krate = &options.krate;
    let builder = &options.builder;
    // Hygienic names: the body cannot see (or shadow) the expansion's locals.
    let pool = syn::Ident::new("pool", Span::mixed_site());
    let output_value = syn::Ident::new("output", Span::mixed_site());
    Ok(match kind {
        Kind::Main => {
            let configure = (!builder.is_empty()).then(|| {
                quote! {
                    #krate::__private::configure_global(#krate::Builder::new() #(#builder)*);
                }
            });
            quote! {
                #(#attrs)*
                #vis fn #name() #output {
                    #configure
                    #krate::block_on(async move #body)
                }
            }
        }
        Kind::Test if options.seeds.is_some() => {
            let test_name = name.to_string();
            let thread_name = (!options.thread_name).then(|| quote!(.thread_name(#test_name)));
            let fail = options.fail_on_leftovers && !function.attrs.iter().any(should_panic_without_message);
            let seeds = match options.seeds {
                Some((seed, false, span)) => quote_spanned!(span=> #krate::__private::Seeds::One(#seed)),
                Some((count, true, span)) => quote_spanned!(span=> #krate::__private::Seeds::Count(#count)),
                None => unreachable!("matched above"),
            };
            quote! {
                #[::core::prelude::v1::test]
                #(#attrs)*
                #vis fn #name() #output {
                    #krate::__private::seeded_test(
                        || #krate::Builder::new() #thread_name #(#builder)*,
                        #seeds,
                        #fail,
                        || async move #body,
                    )
                }
            }
        }
        Kind::Test => {
            let workers = (!options.workers).then(|| quote!(.workers(2)));
            let test_name = name.to_string();
            let thread_name = (!options.thread_name).then(|| quote!(.thread_name(#test_name)));
            // A `#[should_panic]` with no expected message would pass on the leftover report's
            // panic however the body went: leftovers fail only tests that name what they expect.
            let fail = options.fail_on_leftovers && !function.attrs.iter().any(should_panic_without_message);
            let shutdown_pool = options
                .shutdown_pool
                .map(|span| quote_spanned!(span=> .unhandled_panic(#krate::UnhandledPanic::ShutdownPool)));
            quote! {
                #[::core::prelude::v1::test]
                #(#attrs)*
                #vis fn #name() #output {
                    let #pool = #krate::__private::test_pool(#krate::Builder::new() #workers #thread_name #(#builder)* #shutdown_pool);
                    let #output_value = #pool.block_on(async move #body);
                    #krate::__private::finish_test(#pool, #fail, &#output_value);
                    #output_value
                }
            }
        }
    })
}

/// Whether `attr` is a `#[should_panic]` that names no expected message.
fn should_panic_without_message(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("should_panic")
        && match &attr.meta {
            syn::Meta::Path(_) => true,
            syn::Meta::List(list) => !list.tokens.to_string().contains("expected"),
            syn::Meta::NameValue(_) => false,
        }
}
