//! Search ranking, limits, determinism and the labelled quality contract.

use codemode_catalog::{Catalog, CatalogOptions};
use codemode_core::{CodeModeConfig, ToolOrigin, ToolSpec};

use crate::support::{
    hit_rates, labelled_queries, public_catalog, public_mcp_tools, small_catalog, top_local_id,
};

fn public() -> &'static Catalog {
    public_catalog()
}

#[test]
fn labelled_ids_exist() {
    let catalog = public();
    for q in labelled_queries() {
        for id in &q.expect {
            assert!(catalog.get(id).is_some(), "label {id:?} of {:?} is not in the catalog", q.query);
        }
    }
}

#[test]
fn labelled_set_top3_at_least_90_percent() {
    let catalog = public();
    let (total, top1, top3, misses) = hit_rates(catalog);
    assert!(total >= 60, "the labelled set must have at least 60 queries, has {total}");
    let rate = top3 as f64 / total as f64;
    assert!(rate >= 0.9, "top-3 {top3}/{total} ({rate:.3}), top-1 {top1}; misses: {misses:#?}");
}

fn ids<'a>(results: &[&'a codemode_core::ToolCatalogEntry]) -> Vec<&'a str> {
    results.iter().map(|e| e.id.as_str()).collect()
}

fn small() -> Catalog {
    Catalog::build(
        vec![
            ToolSpec::new("create_issue", ToolOrigin::BundledPlugin, "github")
                .description("Create a new issue"),
            ToolSpec::new("list_issues", ToolOrigin::BundledPlugin, "github").description("List issues"),
            ToolSpec::new("getFeatureFlag", ToolOrigin::BundledPlugin, "flags").description("Read one flag"),
            ToolSpec::new("browser-navigate", ToolOrigin::BundledPlugin, "browser")
                .description("Go to a URL"),
            ToolSpec::new("fs.readFile", ToolOrigin::BundledPlugin, "fs")
                .description("Read a file from disk"),
            ToolSpec::new("HTTPServerStart", ToolOrigin::BundledPlugin, "web").description("Boot it"),
            ToolSpec::core("message").description("Send a chat message; mentions issues in passing"),
            ToolSpec::new("select_file", ToolOrigin::Client, "app")
                .description("Ask the user to pick a file"),
        ],
        &CatalogOptions::default(),
    )
}

#[test]
fn names_outweigh_descriptions() {
    let catalog = small();
    let hits = catalog.search_hits("issues", 8);
    let matched: Vec<&str> = hits.iter().filter(|h| h.score > 0.0).map(|h| h.entry.id.as_str()).collect();
    assert_eq!(
        matched,
        ["openclaw:github:list_issues", "openclaw:github:create_issue", "openclaw:core:message"]
    );
    assert_eq!(hits[0].matched, "name: issues; summary: issues");
    assert_eq!(hits[2].matched, "summary: issues");
}

#[test]
fn hits_carry_score_and_match_and_never_run_dry() {
    let catalog = small();
    let guests = catalog.guest_entries().count();
    for query in ["issues", "qqqqqqqq zzzzzzzz", "🙂", "read file", "open a ticket"] {
        for limit in [1, 3, guests, guests + 5, 50] {
            let hits = catalog.search_hits(query, limit);
            assert_eq!(hits.len(), limit.min(guests), "{query:?} limit {limit}");
            assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{query:?}: best first");
            for hit in &hits {
                assert!((0.0..=1.0).contains(&hit.score), "{query:?}: {}", hit.score);
                assert!(hit.matched.chars().count() <= codemode_catalog::search::MAX_MATCH_CHARS);
                assert_eq!(hit.score == 0.0, hit.matched == "nearest" || hit.matched.is_empty(), "{hit:?}");
            }
        }
    }
    // Nothing matches: the nearest names, all marked.
    let hits = catalog.search_hits("qqqqqqqq zzzzzzzz", 3);
    assert!(hits.iter().all(|h| h.score == 0.0 && h.matched == "nearest"));
    // The serialized hit is the entry plus `score` and `match`.
    let json = serde_json::to_value(&catalog.search_hits("create issue", 1)[0]).unwrap();
    assert_eq!(json["id"], "openclaw:github:create_issue");
    assert!(json["score"].as_f64().unwrap() > 0.3, "{json}");
    assert_eq!(json["match"], "name: create, issue; summary: create, issue");
    // An exact name scores 1.
    assert_eq!(catalog.search_hits("list_issues", 1)[0].score, 1.0);
}

#[test]
fn read_questions_prefer_read_tools() {
    let catalog = small();
    // "who" asks; "create" acts: the verb decides between two tools on the same noun.
    assert_eq!(ids(&catalog.search("which issues are there", 1)), ["openclaw:github:list_issues"]);
    assert_eq!(ids(&catalog.search("show me issues", 1)), ["openclaw:github:list_issues"]);
    assert_eq!(ids(&catalog.search("add issue", 1)), ["openclaw:github:create_issue"]);
    assert_eq!(ids(&catalog.search("file a new ticket", 1)), ["openclaw:github:create_issue"]);
}

/// Two servers: a cloud whose tool names say `disk`, and a file server whose tools are about
/// files. An intent about files that mentions a disk in passing belongs to the file server.
fn two_servers() -> Catalog {
    let cloud = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "cloud").description(description)
    };
    let files = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "files").description(description)
    };
    Catalog::build(
        vec![
            cloud("compute_disk_get", "Get the details of a managed disk of a virtual machine"),
            cloud("compute_disk_create", "Create a managed disk for a virtual machine"),
            cloud("compute_vm_get", "Get a virtual machine"),
            cloud("compute_vm_create", "Create a virtual machine"),
            cloud("storage_account_list", "List the storage accounts of a subscription"),
            files("read_text_file", "Read the complete contents of a file as text"),
            files("write_file", "Create a new file or overwrite a file with new content"),
            files("list_directory", "List the files and directories in a directory"),
            files("get_file_info", "Retrieve metadata about a file or directory: size, times"),
            files("move_file", "Move or rename a file or directory"),
            files("read_multiple_files", "Read the contents of several files at once"),
            files("search_files", "Search for files whose names or contents match a pattern"),
        ],
        &CatalogOptions::default(),
    )
}

#[test]
fn the_server_an_intent_is_about_leads_the_top_three() {
    let catalog = two_servers();
    let owners = |query: &str| -> Vec<String> {
        catalog
            .search(query, 3)
            .iter()
            .map(|e| e.id.split(':').nth(1).unwrap_or_default().to_owned())
            .collect()
    };
    // The cloud's `disk` tool matches two words of the name; the files server's best tool comes
    // next, and its next tool is within the top 4. The third place is a near tie (within 1%)
    // between the cloud's `compute_vm_get`, which matches only `get`, and a files tool matching
    // `get~` and `document~`: since the owner stage caps a verb-class expansion (`get` ~ `read`)
    // at the verb's own weight and weighs a server by its size (7 tools against 5), the tie goes
    // to the cloud. (Before, it went to the files server by the same 1%.)
    let owners4 = |query: &str| -> Vec<String> {
        catalog
            .search(query, 4)
            .iter()
            .map(|e| e.id.split(':').nth(1).unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(owners4("get a document from disk"), ["cloud", "files", "cloud", "files"]);
    assert_eq!(owners4("get a document size on disk"), ["files", "cloud", "cloud", "files"]);
    assert_eq!(owners("get a document size on disk")[..2], ["files", "cloud"]);
    assert_eq!(
        ids(&catalog.search("get the text of a document on disk", 1)),
        ["openclaw:files:read_text_file"]
    );
    // The owner stage weighs servers; it never hides the tool a query names.
    assert_eq!(ids(&catalog.search("create a disk", 1)), ["openclaw:cloud:compute_disk_create"]);
}

#[test]
fn adjacent_query_words_prefer_the_name_that_has_them_side_by_side() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::new("group_user_list", ToolOrigin::BundledPlugin, "directory").description("List them"),
            ToolSpec::new("user_group_list", ToolOrigin::BundledPlugin, "directory").description("List them"),
        ],
        &CatalogOptions::default(),
    );
    // The same words in both names: the order of the query decides, not catalog order.
    assert_eq!(ids(&catalog.search("user group list", 1)), ["openclaw:directory:user_group_list"]);
    assert_eq!(ids(&catalog.search("group user list", 1)), ["openclaw:directory:group_user_list"]);
}

#[test]
fn an_unmatched_head_noun_costs() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::new("remove_issue_link", ToolOrigin::BundledPlugin, "tracker")
                .description("Remove a link between two issues"),
            ToolSpec::new("delete_issue", ToolOrigin::BundledPlugin, "tracker")
                .description("Delete an issue permanently"),
            ToolSpec::new("get_issue", ToolOrigin::BundledPlugin, "tracker").description("Get one issue"),
        ],
        &CatalogOptions::default(),
    );
    // "remove" is the link tool's own verb, yet its head noun `link` is not asked for.
    assert_eq!(ids(&catalog.search("remove an issue", 1)), ["openclaw:tracker:delete_issue"]);
    assert_eq!(
        ids(&catalog.search("remove the link between two issues", 1)),
        ["openclaw:tracker:remove_issue_link"]
    );
}

#[test]
fn a_past_participle_after_the_noun_is_a_lookup() {
    let catalog = Catalog::build(
        vec![
            ToolSpec::new("submit_review", ToolOrigin::BundledPlugin, "git")
                .description("Submit a review on a pull request"),
            ToolSpec::new("list_reviews", ToolOrigin::BundledPlugin, "git")
                .description("List the reviews of a pull request"),
        ],
        &CatalogOptions::default(),
    );
    // "submitted" names the reviews' state, not an action: the read tool wins.
    assert_eq!(ids(&catalog.search("reviews submitted on a PR", 1)), ["openclaw:git:list_reviews"]);
    // A leading verb is still the action.
    assert_eq!(ids(&catalog.search("submit a review on a PR", 1)), ["openclaw:git:submit_review"]);
}

#[test]
fn a_name_family_the_query_is_about_wins_within_a_server() {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "suite").description(description)
    };
    let catalog = Catalog::build(
        vec![
            tool("hr_search", "Search records with a query language"),
            tool("hr_get_employee", "Get an employee. Employees are staff on the payroll."),
            tool("hr_create_employee", "Create an employee. Employees are staff on the payroll."),
            tool("hr_delete_employee", "Delete an employee. Employees are staff on the payroll."),
            tool("crm_search", "Search records with a query language"),
            tool("crm_get_contact", "Get a contact. Contacts are customers and their companies."),
            tool("crm_create_contact", "Create a contact. Contacts are customers and their companies."),
            tool("crm_delete_contact", "Delete a contact. Contacts are customers and their companies."),
        ],
        &CatalogOptions::default(),
    );
    // Both search tools match alike; customers are the crm family's concern, staff the hr family's.
    assert_eq!(ids(&catalog.search("search customers named bob", 1)), ["openclaw:suite:crm_search"]);
    assert_eq!(ids(&catalog.search("search staff named bob", 1)), ["openclaw:suite:hr_search"]);
}

#[test]
fn synonyms_phrases_and_plural_acronyms() {
    let tools = vec![
        ToolSpec::new("create_pull_request", ToolOrigin::BundledPlugin, "git")
            .description("Open a pull request"),
        ToolSpec::new("list_pull_requests", ToolOrigin::BundledPlugin, "git")
            .description("List pull requests"),
        ToolSpec::new("star_repository", ToolOrigin::BundledPlugin, "git").description("Star a repository"),
        ToolSpec::new("request_review", ToolOrigin::BundledPlugin, "git").description("Request a review"),
        ToolSpec::new("keyvault_secret_get", ToolOrigin::BundledPlugin, "cloud").description("Get a secret"),
    ];
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    assert_eq!(ids(&catalog.search("which PRs are waiting", 1)), ["openclaw:git:list_pull_requests"]);
    assert_eq!(ids(&catalog.search("new merge request", 1)), ["openclaw:git:create_pull_request"]);
    assert_eq!(ids(&catalog.search("bookmark a repo", 1)), ["openclaw:git:star_repository"]);
    assert_eq!(ids(&catalog.search("password in the key vault", 1)), ["openclaw:cloud:keyvault_secret_get"]);
}

fn tracker() -> Catalog {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "tracker").description(description)
    };
    Catalog::build(
        vec![
            tool("get_page", "Get a wiki page by its id"),
            tool("delete_page", "Delete a wiki page"),
            tool("star_repository", "Star a repository"),
            tool("unstar_repository", "Unstar a repository"),
            tool("list_repository_collaborators", "List the collaborators of a repository"),
            tool("push_files", "Push several files to a repository in one commit"),
            tool("assign_issue", "Assign an issue to a user"),
            tool("get_issue", "Get an issue with its assignees and status"),
            tool("write_file", "Write content to a file on disk"),
            tool("add_comment", "Add a comment"),
            tool("get_audit_log", "Read the audit log"),
            tool("sign_in", "Sign in with a user name and password"),
        ],
        &CatalogOptions::default(),
    )
}

#[test]
fn phrasal_verbs_fold_into_the_verb_they_mean() {
    let catalog = tracker();
    // `get rid of` is a delete, not a read led by `get`.
    assert_eq!(ids(&catalog.search("get rid of an old wiki page", 1)), ["openclaw:tracker:delete_page"]);
    // A particle away from its verb still makes the phrase: `take ... off` removes.
    assert_eq!(ids(&catalog.search("take my star off a repo", 1)), ["openclaw:tracker:unstar_repository"]);
    // The undoing form of a verb names the verb: `unstar` matches `star`.
    assert_eq!(
        ids(&catalog.search("remove the star from a repo", 1)),
        ["openclaw:tracker:unstar_repository"]
    );
    assert_eq!(ids(&catalog.search("star a repo", 1)), ["openclaw:tracker:star_repository"]);
    // A stop word inside a phrase form (`log in`) does not fold a lone `log` into signing in.
    assert_eq!(ids(&catalog.search("read the log", 1)), ["openclaw:tracker:get_audit_log"]);
    assert_eq!(ids(&catalog.search("log in", 1)), ["openclaw:tracker:sign_in"]);
}

#[test]
fn approving_asks_for_a_review_and_renaming_for_a_title() {
    let catalog = small_catalog(&[
        ("forge", "add_issue_comment", "Add a comment to an issue or pull request"),
        ("forge", "label_write", "Perform write operations on repository labels"),
        ("forge", "create_pull_request_review", "Create a review on a pull request"),
        ("forge", "update_issue_title", "Update the title of an issue"),
    ]);
    // Signing off (approving) is a review; renaming sets a title.
    assert_eq!(
        top_local_id(&catalog, "sign off on #33 in acme/web with a short LGTM"),
        "forge:create_pull_request_review"
    );
    assert_eq!(
        top_local_id(&catalog, "rename #45 in acme/shop to 'Crash on empty cart'"),
        "forge:update_issue_title"
    );
}

#[test]
fn everyday_words_reach_the_concept() {
    let catalog = small_catalog(&[
        ("forge", "star_repository", "Star a repository for the authenticated user"),
        ("forge", "unstar_repository", "Unstar a repository for the authenticated user"),
        ("forge", "get_team_members", "Get the member usernames of a team in an organization"),
        ("chat", "slack_get_users", "Get a list of all users in the workspace with their profiles"),
        ("cloud", "deploy_plan_get", "Generate a deployment plan for an application's workloads"),
        ("cloud", "functionapp_get", "Get the details of function apps: name, location, status, plan"),
    ]);
    // `no longer want` removes; the team chat is Slack; serverless workloads are function apps.
    assert_eq!(
        top_local_id(&catalog, "I no longer want vercel/next.js in my favourites"),
        "forge:unstar_repository"
    );
    assert_eq!(
        top_local_id(&catalog, "everyone on the team chat - names and handles"),
        "chat:slack_get_users"
    );
    assert_eq!(
        top_local_id(&catalog, "serverless workloads in rg-jobs and their state"),
        "cloud:functionapp_get"
    );
}

#[test]
fn letting_someone_know_notifies_them() {
    let catalog = small_catalog(&[
        ("team", "get_release", "Get the details of a release, with its status"),
        ("team", "send_notification", "Send a notification to a channel or a user"),
    ]);
    // `let ... know` tells someone; `let me know` asks to be told.
    assert_eq!(top_local_id(&catalog, "let the on-call folks know we are done"), "team:send_notification");
    assert_eq!(top_local_id(&catalog, "let me know the release status"), "team:get_release");
}

#[test]
fn question_words_ask_for_what_they_mean_and_verbs_in_a_question_are_states() {
    let catalog = tracker();
    // `who` asks for people: the collaborators, not the tool named by the question's verb.
    assert_eq!(
        ids(&catalog.search("who can push to this repo", 1)),
        ["openclaw:tracker:list_repository_collaborators"]
    );
    // `assigned` in a question is the state, not the assign action.
    assert_eq!(ids(&catalog.search("who is assigned to issue 42", 1)), ["openclaw:tracker:get_issue"]);
    assert_eq!(ids(&catalog.search("assign issue 42 to alice", 1)), ["openclaw:tracker:assign_issue"]);
}

#[test]
fn a_leading_plural_noun_is_no_verb() {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "wiki").description(description)
    };
    let catalog = Catalog::build(
        vec![
            tool("add_comment", "Add a comment to a page"),
            tool("get_comments", "Get the comments of a page"),
        ],
        &CatalogOptions::default(),
    );
    // `comments` leading a query is a plural noun (an imperative takes no -s): a lookup of the
    // comments, not the comment action.
    assert_eq!(ids(&catalog.search("comments on a page", 1)), ["openclaw:wiki:get_comments"]);
    assert_eq!(ids(&catalog.search("comment on a page", 1)), ["openclaw:wiki:add_comment"]);
}

#[test]
fn what_a_query_names_tells_by_its_form() {
    let catalog = tracker();
    // `notes.txt` is a file, though no word of the query says so.
    assert_eq!(ids(&catalog.search("save this content to notes.txt", 1)), ["openclaw:tracker:write_file"]);
}

#[test]
fn the_words_of_a_named_thing_are_not_words_of_the_ask() {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "desk").description(description)
    };
    let catalog = Catalog::build(
        vec![tool("search_release_notes", "Search the notes of releases"), tool("read_file", "Read a file")],
        &CatalogOptions::default(),
    );
    // `release-notes.md` is a file: its words do not make the ask about release notes.
    assert_eq!(ids(&catalog.search("open release-notes.md", 1)), ["openclaw:desk:read_file"]);
    assert_eq!(ids(&catalog.search("open the release notes", 1)), ["openclaw:desk:search_release_notes"]);
    // A query that is only a named thing still searches its words.
    assert_eq!(ids(&catalog.search("release-notes.md", 1)), ["openclaw:desk:search_release_notes"]);
}

#[test]
fn a_fallback_for_a_write_ask_prefers_write_tools() {
    let catalog = tracker();
    // No word matches: the nearest entries still follow the action (a write ask, write tools).
    let hits = catalog.search_hits("save that the window is fridays", 3);
    assert!(hits.iter().all(|h| h.matched == "nearest"), "{hits:?}");
    for hit in &hits {
        let name = hit.entry.id.rsplit(':').next().unwrap_or_default();
        assert!(
            ["star_", "unstar_", "push_", "assign_", "write_", "add_", "sign_"]
                .iter()
                .any(|p| name.starts_with(p)),
            "{name} is not a write tool: {hits:?}"
        );
        assert!(!name.starts_with("delete_") && !name.starts_with("get_") && !name.starts_with("list_"));
    }
}

/// A plugin tool of server `owner`.
fn owned_tool(owner: &str, name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(name, ToolOrigin::BundledPlugin, owner).description(description)
}

#[test]
fn a_query_naming_a_server_picks_it() {
    let catalog = Catalog::build(
        vec![
            owned_tool("cloud", "deploy_app", "Deploy an app to the cloud"),
            owned_tool("cloud", "deploy_plan", "Plan a deployment to the cloud"),
            owned_tool("cloud", "deploy_logs", "Logs of a deployment"),
            owned_tool("forge", "run_workflow", "Run a workflow of a repository"),
            owned_tool("forge", "list_workflows", "List the workflows of a repository"),
            owned_tool("forge", "list_deployments", "List the deployments of a repository"),
            owned_tool("chat", "post_message", "Post a message to a channel"),
            owned_tool("chat", "list_channels", "List the channels"),
        ],
        &CatalogOptions::default(),
    );
    let owner = |query: &str| catalog.search(query, 1)[0].id.split(':').nth(1).unwrap_or_default().to_owned();
    // The deployment words are the cloud's; naming the forge picks the forge.
    assert_eq!(owner("deploy"), "cloud");
    assert_eq!(owner("deploy on forge"), "forge");
    // Naming a server weighs it; it does not hide the tool the rest of the query names.
    assert_eq!(owner("deployment logs on forge"), "cloud");
    let top3 = ids(&catalog.search("deployment logs on forge", 3));
    assert!(top3.contains(&"openclaw:forge:list_deployments"), "{top3:?}");
    // `#general` is a channel: the chat server, though no word says so.
    assert_eq!(owner("the build is green #general"), "chat");
    assert_eq!(catalog.search_hits("the build is green #general", 1)[0].matched, "asks: channel~");
}

#[test]
fn a_typo_in_a_word_of_a_vocabulary_phrase_finds_the_phrase() {
    // `console messages` is one vocabulary phrase: its words are indexed as the phrase, and a typo
    // in either still reaches it. An English word one edit from a phrase word (`black`, `back` of
    // `go back`) is no typo of it.
    let catalog = Catalog::build(
        vec![
            owned_tool("browser", "console_messages", "Returns all console messages"),
            owned_tool("browser", "navigate_back", "Go back to the previous page"),
            owned_tool("browser", "click", "Perform a click on a web page"),
        ],
        &CatalogOptions::default(),
    );
    for query in ["consle", "messges", "the erors the consle printed"] {
        let hits = catalog.search_hits(query, 1);
        assert_eq!(hits[0].entry.id, "openclaw:browser:console_messages", "{query}");
        assert!(hits[0].score > 0.0, "{query}: {}", hits[0].matched);
    }
    let hits = catalog.search_hits("black", 3);
    assert!(
        hits.iter().all(|h| !h.matched.contains("black~")),
        "{:?}",
        hits.iter().map(|h| &h.matched).collect::<Vec<_>>()
    );
}

#[test]
fn a_word_english_has_is_no_typo() {
    // `last` is one edit from `list`, `sitting` from `setting`: each is the word it is.
    let catalog = crate::support::small_catalog(&[
        ("flags", "list_feature_flags", "List the feature flags of a project"),
        ("flags", "get_audit_log_entries", "Get the audit log entries: who changed what"),
        ("flags", "get_settings", "Get the settings of a project"),
    ]);
    let hits = catalog.search_hits("who changed the checkout flag last week", 1);
    assert_eq!(hits[0].entry.name, "get_audit_log_entries", "{}", hits[0].matched);
    for query in ["last", "sitting"] {
        let hits = catalog.search_hits(query, 3);
        assert!(
            hits.iter().all(|h| h.score == 0.0),
            "{query}: {:?}",
            hits.iter().map(|h| &h.matched).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_typo_of_a_vocabulary_word_reads_as_the_word() {
    // The catalog has none of `decommission`, `retitle` or `transcribe`: the vocabulary does, and
    // a typo of one reads as it (a delete verb, a rename, speech to text).
    let catalog = Catalog::build(
        vec![
            owned_tool("cloud", "server_delete", "Delete a server"),
            owned_tool("cloud", "server_get", "Get a server"),
            owned_tool("forge", "update_pull_request_title", "Update the title of a pull request"),
            owned_tool("forge", "list_pull_requests", "List pull requests"),
            owned_tool("speech", "stt_recognize", "Recognize speech in an audio file and return text"),
            owned_tool("files", "read_text_file", "Read a text file"),
            owned_tool("docs", "add_inline_comment", "Add an inline comment to a page"),
            owned_tool("docs", "get_status", "Get the status of the service"),
        ],
        &CatalogOptions::default(),
    );
    let top = |q: &str| catalog.search(q, 1)[0].id.clone();
    assert_eq!(top("decomission server web-01"), "openclaw:cloud:server_delete");
    assert_eq!(top("retitel PR 71 to 'Refactor auth'"), "openclaw:forge:update_pull_request_title");
    assert_eq!(top("transcirbe voicemail.mp3 into text"), "openclaw:speech:stt_recognize");
    // A typo of a word the catalog has that ends a phrase (`pull requets`) reads as the phrase.
    let public = crate::support::public_catalog();
    let top3 = ids(&public.search("lst pull requets", 3));
    assert!(top3.iter().all(|id| id.contains("pull_request") && !id.contains("review")), "{top3:?}");
    // A typo keeps its first letter: `online` is no typo of `inline`.
    let hits = catalog.search_hits("is the service online", 1);
    assert_eq!(hits[0].entry.id, "openclaw:docs:get_status", "{}", hits[0].matched);
}

#[test]
fn a_typo_of_one_catalog_word_reads_as_the_word() {
    // `subscritpions` and `acount` are each one catalog word misspelled: they read as the words
    // (full weight, with their synonyms), not as near matches that a word such as `show` in other
    // entries' text outweighs.
    let catalog = crate::support::small_catalog(&[
        ("cloud", "subscription_list", "List all subscriptions for the current account"),
        ("cloud", "storage_container_get", "Show/list containers in a storage account"),
        ("cloud", "storage_blob_get", "List/get/show blobs in a container of a storage account"),
        ("data", "list_clusters", "List the data explorer clusters of a subscription"),
        ("data", "run_macro", "Run a macro over a report"),
        ("forms", "get_fields", "Get the fields of a form"),
        ("forms", "list_files", "List the files attached to a form"),
    ]);
    let hits = catalog.search_hits("please show me which subscritpions my acount is able to see", 1);
    assert_eq!(hits[0].entry.name, "subscription_list");
    assert!(
        hits[0].matched.contains("subscriptions,")
            && hits[0].matched.contains("account")
            && !hits[0].matched.contains("acount"),
        "{}",
        hits[0].matched
    );
    // A word of a hyphenated compound too (`double-clikc` is no coined name like `hq-docs`).
    let hits = catalog.search_hits("dump the containre-clsuters", 1);
    assert_eq!(hits[0].entry.name, "list_clusters", "{}", hits[0].matched);
    // Four letters: two swapped letters (`fiel`), not in a name (`snet-fiel`).
    let hits = catalog.search_hits("attached fiel of a form", 1);
    assert_eq!(hits[0].entry.name, "list_files", "{}", hits[0].matched);
    assert!(hits[0].matched.contains("file") && !hits[0].matched.contains("fiel~"), "{}", hits[0].matched);
    let hits = catalog.search_hits("attached snet-fiel of a form", 3);
    assert!(
        hits.iter().all(|h| !h.matched.contains("file")),
        "{:?}",
        hits.iter().map(|h| &h.matched).collect::<Vec<_>>()
    );
    let hits = catalog.search_hits("show all the clsuters", 1);
    assert_eq!(hits[0].entry.name, "list_clusters", "{}", hits[0].matched);
    assert!(
        hits[0].matched.contains("cluster") && !hits[0].matched.contains("clsuters"),
        "{}",
        hits[0].matched
    );
    // A capitalised word after the first is a name: `Marco` is not rewritten as `macro` (at most a
    // near match).
    let hits = catalog.search_hits("send the report to Marco", 5);
    assert!(
        hits.iter().all(|h| !h.matched.contains("macro")),
        "{:?}",
        hits.iter().map(|h| &h.matched).collect::<Vec<_>>()
    );
    // Two catalog words as near (`files`, `fields`): the typo stays as written, a near match of both.
    let hits = catalog.search_hits("stuck fiels", 2);
    assert!(
        hits.iter().all(|h| h.matched.contains("fiels~")),
        "{:?}",
        hits.iter().map(|h| &h.matched).collect::<Vec<_>>()
    );
}

#[test]
fn a_typo_in_an_inflected_word_is_found_through_its_stem() {
    // The catalog has `assign` and `commit`: the typos (`asigns`, `comited`) are two edits from
    // those forms as written, one once the endings go (and no vocabulary word is one edit away).
    let catalog = Catalog::build(
        vec![
            owned_tool("forge", "assign_issue", "Assign an issue to a user"),
            owned_tool("forge", "create_commit", "Commit a change to a branch"),
            owned_tool("forge", "list_releases", "List the releases of a repository"),
        ],
        &CatalogOptions::default(),
    );
    for (query, id, matched) in [
        ("asigns", "openclaw:forge:assign_issue", "name: asigns~"),
        ("comited", "openclaw:forge:create_commit", "name: comited~"),
    ] {
        let hits = catalog.search_hits(query, 1);
        assert_eq!(hits[0].entry.id, id, "{query}");
        assert!(hits[0].matched.starts_with(matched), "{query}: {}", hits[0].matched);
    }
}

#[test]
fn an_emoji_a_phone_number_and_a_chat_id_say_what_the_query_is_about() {
    let catalog = Catalog::build(
        vec![
            owned_tool("chat", "add_reaction", "Add a reaction emoji to a message"),
            owned_tool("chat", "get_user_profile", "Get a user's profile"),
            owned_tool("chat", "list_channels", "List the channels"),
            owned_tool("sms", "send_sms", "Send an SMS to a phone number"),
            owned_tool("forge", "list_releases", "List the releases of a repository"),
            owned_tool("forge", "update_issue_title", "Update the title of an issue"),
            owned_tool("forge", "update_pull_request_title", "Update the title of a pull request"),
        ],
        &CatalogOptions::default(),
    );
    let top = |query: &str| catalog.search(query, 1)[0].id.clone();
    // No word of these asks names the tool; the form of what they name does.
    assert_eq!(top("drop a :tada: on it"), "openclaw:chat:add_reaction");
    assert_eq!(top("put :+1: under that"), "openclaw:chat:add_reaction");
    assert_eq!(top("ping +4915112345678 about tonight"), "openclaw:sms:send_sms");
    assert_eq!(top("ping +44 7700900123 about tonight"), "openclaw:sms:send_sms");
    assert_eq!(top("ping 555-010-9999 about tonight"), "openclaw:sms:send_sms");
    assert_eq!(top("who is U024BE7LH"), "openclaw:chat:get_user_profile");
    assert_eq!(top("what is in C01ABCDEF9"), "openclaw:chat:list_channels");
    // What it names counts beside the ask's words: `title` is in the names of two tools of
    // another server, but the ask is about a user.
    assert_eq!(top("who is U024BE7LH, what's their title"), "openclaw:chat:get_user_profile");
    // A clock time, a date and a version are none of these.
    assert_ne!(top("releases since 2024-01-15"), "openclaw:sms:send_sms");
    assert_ne!(top("what title did release 1.2.3 have"), "openclaw:chat:add_reaction");
}

#[test]
fn a_written_form_names_the_server_whose_tools_show_it() {
    let tool = |owner: &str, name: &str, description: &str, key: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, owner).description(description).parameters(
            serde_json::json!({"type": "object", "properties": {"key": {"type": "string", "description": key}}}),
        )
    };
    let tools = |tracker_doc: &str| {
        vec![
            tool("forge", "close_issue", "Close an issue of a repository", "The issue number"),
            tool("forge", "list_issues", "List the issues of a repository", "A label"),
            tool("forge", "mark_read", "Mark a notification as read", "The notification"),
            tool("tracker", "close_ticket", "Close a ticket", tracker_doc),
            tool("tracker", "get_ticket", "Get a ticket", tracker_doc),
        ]
    };
    let owner = |catalog: &Catalog, query: &str| {
        catalog.search(query, 1)[0].id.split(':').nth(1).unwrap_or_default().to_owned()
    };
    // The tracker's parameter docs show keys written `PROJ-123`: a query naming `OPS-7` is about
    // the tracker, though its words ("close", "issue") are the forge's tool's name.
    let shown = Catalog::build(tools("The ticket key (e.g. 'PROJ-123')"), &CatalogOptions::default());
    assert_eq!(owner(&shown, "close issue OPS-7"), "tracker");
    // Without the example the form says nothing about the server.
    let plain = Catalog::build(tools("The ticket key"), &CatalogOptions::default());
    assert_eq!(owner(&plain, "close issue OPS-7"), "forge");
}

#[test]
fn a_negated_word_is_not_asked_for() {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "vcs").description(description)
    };
    let catalog = Catalog::build(
        vec![
            tool("merge_request", "Merge a pull request"),
            tool("close_request", "Close a pull request"),
            tool("diff_staged", "Show the staged changes"),
            tool("diff_unstaged", "Show the changes in the working tree"),
        ],
        &CatalogOptions::default(),
    );
    let top = |query: &str| catalog.search(query, 1)[0].id.rsplit(':').next().unwrap_or_default().to_owned();
    assert_eq!(top("pull request closing"), "close_request");
    assert_eq!(top("pull request without closing"), "merge_request");
    assert_eq!(top("close a pull request without merging"), "close_request");
    // `not staged` is the indexed un-form.
    assert_eq!(top("changes staged"), "diff_staged");
    assert_eq!(top("changes not staged yet"), "diff_unstaged");
    // A query is never negated away.
    assert_eq!(catalog.search("without merging", 4).len(), 4);
    assert_eq!(top("without merging"), "merge_request");
}

#[test]
fn names_split_on_case_kebab_and_dots() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("feature flag", 1)), ["openclaw:flags:getFeatureFlag"]);
    assert_eq!(ids(&catalog.search("navigate", 1)), ["openclaw:browser:browser-navigate"]);
    assert_eq!(ids(&catalog.search("read file", 1)), ["openclaw:fs:fs.readFile"]);
    assert_eq!(ids(&catalog.search("http server", 1)), ["openclaw:web:HTTPServerStart"]);
    assert_eq!(ids(&catalog.search("start", 1)), ["openclaw:web:HTTPServerStart"]);
}

#[test]
fn tolerates_typos_and_plurals() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("isue", 1)), ["openclaw:github:list_issues"]);
    assert_eq!(ids(&catalog.search("craete isue", 1)), ["openclaw:github:create_issue"]);
    assert_eq!(ids(&catalog.search("navigates", 1)), ["openclaw:browser:browser-navigate"]);
    assert_eq!(ids(&catalog.search("feature flags", 1)), ["openclaw:flags:getFeatureFlag"]);
    assert_eq!(ids(&catalog.search("created issue", 1)), ["openclaw:github:create_issue"]);
}

#[test]
fn exact_name_or_id_goes_first() {
    let catalog = small();
    assert_eq!(ids(&catalog.search("message", 8))[0], "openclaw:core:message");
    assert_eq!(ids(&catalog.search("openclaw:github:list_issues", 8))[0], "openclaw:github:list_issues");
}

#[test]
fn ties_break_by_catalog_order() {
    let tools: Vec<ToolSpec> = ["zeta", "alpha", "mid"]
        .iter()
        .map(|owner| ToolSpec::new("twin_tool", ToolOrigin::BundledPlugin, *owner).description("same"))
        .collect();
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    assert_eq!(
        ids(&catalog.search("twin", 8)),
        ["openclaw:alpha:twin_tool", "openclaw:mid:twin_tool", "openclaw:zeta:twin_tool"]
    );
}

#[test]
fn limits_empty_and_nonsense_queries() {
    let catalog = small();
    assert!(catalog.search("issues", 0).is_empty());
    assert_eq!(catalog.search("issues", 1).len(), 1);
    // No usable token: the guest entries in catalog order.
    let listed: Vec<&str> = ids(&catalog.search("  the a ", 3));
    let first3: Vec<&str> = catalog.guest_entries().take(3).map(|e| e.id.as_str()).collect();
    assert_eq!(listed, first3);
    // Nothing matches: still entries (the nearest names), never `[]`.
    assert_eq!(catalog.search("qqqqqqqq zzzzzzzz", 8).len(), 8);
    // Fallback: no term matches, but the name is similar.
    assert_eq!(ids(&catalog.search("selectfil", 1)), ["client:app:select_file"]);
}

#[test]
fn hostile_queries_are_bounded_and_deterministic() {
    let catalog = public_catalog();
    let long = "issue ".repeat(100_000);
    let a = ids(&catalog.search(&long, 50));
    assert!(!a.is_empty() && a.len() <= 50);
    let weird = "\u{0}\u{1f}🙂 ünïcödé __proto__ constructor 💥".repeat(50);
    let b = ids(&catalog.search(&weird, 50));
    assert_eq!(b, ids(&catalog.search(&weird, 50)));
}

#[test]
fn mcp_catalogs_are_never_searched() {
    let mut tools = public_mcp_tools();
    tools.push(ToolSpec::core("message").description("Send a message"));
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    assert!(ids(&catalog.search("create pull request", 50)).iter().all(|id| !id.starts_with("mcp:")));
    assert_eq!(ids(&catalog.search("send a message", 50)), ["openclaw:core:message"]);
}

/// A search scoped to some owners (`search_hits_in`, `search_mcp_in`: what `API.search(query, {
/// server })` runs) is the unscoped ranking with every other owner's entries taken out: the same
/// entries in the same order with the same scores and match texts, `min(limit, their entries)` of
/// them; no scope is no filter, and an owner with no entries gives `[]`.
#[test]
fn a_scoped_search_is_the_unscoped_ranking_of_those_owners() {
    let plugin = public_catalog();
    let mcp = Catalog::build(public_mcp_tools(), &CatalogOptions::default());
    let key = |hit: &codemode_catalog::SearchHit<'_>| (hit.entry.id.clone(), hit.score, hit.matched.clone());
    let owner_of = |id: &str| id.split(':').nth(1).unwrap_or_default().to_owned();
    let queries: Vec<String> =
        intents().into_iter().step_by(7).map(|i| i.query).chain(["".to_owned()]).collect();
    for query in &queries {
        let everything: Vec<_> = plugin.search_hits(query, 677).iter().map(key).collect();
        let everything_mcp: Vec<_> = mcp.search_mcp(query, 677).iter().map(key).collect();
        assert_eq!(everything.len(), 677);
        assert_eq!(plugin.search_hits_in(query, 5, &[]).iter().map(key).collect::<Vec<_>>(), everything[..5]);
        for owners in [&["github"][..], &["fetch"], &["git", "azure-all"], &["memory", "time", "everything"]]
        {
            // The unscoped ranking's first 5 of `owners`.
            let of_owners = |ranking: &[(String, f64, String)]| -> Vec<(String, f64, String)> {
                ranking
                    .iter()
                    .filter(|(id, _, _)| owners.contains(&owner_of(id).as_str()))
                    .take(5)
                    .cloned()
                    .collect()
            };
            let scoped: Vec<_> = plugin.search_hits_in(query, 5, owners).iter().map(key).collect();
            assert_eq!(scoped, of_owners(&everything), "{query:?} in {owners:?}");
            let scoped: Vec<_> = mcp.search_mcp_in(query, 5, owners).iter().map(key).collect();
            assert_eq!(scoped, of_owners(&everything_mcp), "{query:?} in {owners:?} (MCP)");
        }
        assert_eq!(plugin.search_hits_in(query, 5, &["fetch"]).len(), 1, "fetch has one tool");
        assert!(plugin.search_hits_in(query, 5, &["gitlab"]).is_empty());
        assert!(mcp.search_mcp_in(query, 5, &["gitlab"]).is_empty());
        // MCP entries are never guest entries, scoped or not.
        assert!(mcp.search_hits_in(query, 5, &["github"]).is_empty());
    }
}

#[test]
fn search_respects_config_defaults() {
    let catalog = public_catalog();
    let config = CodeModeConfig::enabled();
    assert_eq!(catalog.search_with_config("list", None, &config).len(), 8);
    assert_eq!(catalog.search_with_config("list", Some(500.0), &config).len(), 50);
}

// ---- the labelled intent set (data/search-intents.json) ----

use std::collections::{HashMap, HashSet};

use codemode_catalog::search::{stem, vocabulary};

use crate::intents::{
    FRESH_SETS, Intent, Ranker, Setting, evaluate, fresh_intents, fresh2_intents, fresh3_intents, intents,
    tool_keys,
};

fn content_terms(text: &str) -> HashSet<String> {
    const STOP: &[&str] = &[
        "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from", "i", "in",
        "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "some", "that", "the",
        "their", "them", "this", "to", "using", "via", "we", "what", "which", "with", "you", "your", "all",
    ];
    let mut spaced = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_ascii_lowercase();
        spaced.push(c);
    }
    spaced
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// Checks an intent set's labels (public tools, one in the intent's own catalog) and returns how
/// many of its intents share no content word with any of their labels' names and titles.
fn check_labels(set: &[Intent]) -> usize {
    let keys = tool_keys();
    let mut titles = std::collections::HashMap::new();
    for c in crate::support::catalog_names() {
        for t in crate::support::raw_tools(&c) {
            let name = t["name"].as_str().unwrap_or_default().to_owned();
            let title = t.get("title").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            titles.insert(format!("{c}:{name}"), format!("{name} {title}"));
        }
    }
    let kinds: HashSet<&str> = set.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, HashSet::from(["paraphrase", "task", "typo", "parameter", "ambiguous"]));
    let catalogs: HashSet<&str> = set.iter().map(|i| i.catalog.as_str()).collect();
    assert_eq!(catalogs.len(), 16, "every public catalog has intents");
    let mut disjoint = 0;
    for intent in set {
        assert!(!intent.expect.is_empty(), "{:?} has no label", intent.query);
        for key in &intent.expect {
            assert!(keys.contains(key), "label {key:?} of {:?} is not a public tool", intent.query);
        }
        let own = intent.expect.iter().filter(|k| k.starts_with(&format!("{}:", intent.catalog))).count();
        assert!(own > 0, "{:?}: no label in its own catalog {}", intent.query, intent.catalog);
        let query = content_terms(&intent.query);
        let shares = intent.expect.iter().any(|k| !query.is_disjoint(&content_terms(&titles[k])));
        if !shares {
            disjoint += 1;
        }
    }
    assert!(
        2 * disjoint >= set.len(),
        "only {disjoint} of {} intents share no content word with a label",
        set.len()
    );
    disjoint
}

#[test]
fn intent_set_has_the_promised_shape() {
    let set = intents();
    assert!(set.len() >= 400, "{} intents", set.len());
    check_labels(&set);
    let holdout = set.iter().filter(|i| i.holdout()).count();
    assert!(
        holdout * 6 >= set.len() && holdout * 3 <= set.len(),
        "held-out split: {holdout} of {}",
        set.len()
    );
}

/// The fresh check set: its own intents (none of the main set's texts), the same label rules.
#[test]
fn fresh_intent_set_has_the_promised_shape() {
    let fresh = fresh_intents();
    assert!(fresh.len() >= 120, "{} fresh intents", fresh.len());
    check_labels(&fresh);
    let main: HashSet<String> = intents().into_iter().map(|i| i.query.to_lowercase()).collect();
    for intent in &fresh {
        assert!(!main.contains(&intent.query.to_lowercase()), "{:?} is in the main set", intent.query);
    }
}

/// A later fresh check set: at least `min` intents, the same label rules, and none of the texts of
/// the sets written before it.
fn check_fresh_set(name: &str, set: &[Intent], min: usize, earlier: Vec<Vec<Intent>>) {
    assert!(set.len() >= min, "{} {name} intents", set.len());
    check_labels(set);
    let earlier: HashSet<String> = earlier.into_iter().flatten().map(|i| i.query.to_lowercase()).collect();
    for intent in set {
        assert!(!earlier.contains(&intent.query.to_lowercase()), "{:?} is in an earlier set", intent.query);
    }
}

/// The main set and the fresh sets in the order they were written; a fresh set's earlier sets are
/// the ones before it.
fn sets_in_order() -> Vec<Vec<Intent>> {
    std::iter::once(intents()).chain(FRESH_SETS.iter().map(|(_, set)| set())).collect()
}

/// Each fresh check set (the second onward): its own intents (none of an earlier set's texts), the
/// same label rules, at least its promised size.
#[test]
fn each_fresh_intent_set_has_the_promised_shape() {
    let mut sets = sets_in_order();
    // (name, position in `sets_in_order`, least size)
    let fresh = [
        ("fresh2", 2, 120),
        ("fresh3", 3, 130),
        ("fresh4", 4, 170),
        ("fresh5", 5, 190),
        ("fresh6", 6, 190),
        ("fresh7", 7, 190),
        ("fresh8", 8, 190),
        ("fresh9", 9, 190),
        ("fresh10", 10, 190),
        ("fresh11", 11, 190),
        ("fresh12", 12, 190),
        ("fresh13", 13, 190),
        ("fresh14", 14, 190),
        ("fresh15", 15, 190),
        ("fresh16", 16, 190),
        ("fresh17", 17, 190),
        ("fresh18", 18, 190),
    ];
    assert_eq!(fresh.len() + 2, sets.len(), "every fresh set past the first is checked");
    for (name, at, min) in fresh.into_iter().rev() {
        let set = sets.pop().expect("set");
        assert_eq!(sets.len(), at, "{name}");
        check_fresh_set(name, &set, min, sets.clone());
    }
}

fn report(setting: Setting, ranker: Ranker, keep: impl Fn(&Intent) -> bool) -> crate::intents::Report {
    evaluate(&intents(), setting, ranker, keep)
}

/// The report of the fresh check set named `name` (`SEARCH_SPLIT` names: `fresh` to `fresh18`,
/// `fresh2-distinct`, `fresh3-distinct`).
fn fresh_report(name: &str, setting: Setting, ranker: Ranker) -> Option<crate::intents::Report> {
    match name {
        "fresh2-distinct" => Some(fresh2_distinct_report(setting, ranker)),
        "fresh3-distinct" => Some(fresh3_distinct_report(setting, ranker)),
        _ => FRESH_SETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, set)| evaluate(&set(), setting, ranker, |_| true)),
    }
}

/// The intents of `set` that are not near copies of an earlier set's: their content words
/// (stemmed) overlap those of every earlier intent by less than half (Jaccard).
fn distinct_report(
    set: &[Intent],
    earlier: &[Intent],
    setting: Setting,
    ranker: Ranker,
) -> crate::intents::Report {
    let earlier: Vec<HashSet<String>> = earlier.iter().map(|i| content_terms(&i.query)).collect();
    let distinct: HashSet<String> = set
        .iter()
        .filter(|i| {
            let own = content_terms(&i.query);
            earlier.iter().all(|e| 2 * own.intersection(e).count() < own.union(e).count())
        })
        .map(|i| i.query.clone())
        .collect();
    evaluate(set, setting, ranker, |i| distinct.contains(&i.query))
}

/// The second fresh set without its near copies of the main and first fresh set's intents.
/// Written by the same hands, about a third of the second set came out close to an earlier text;
/// tuning on the first fresh set could lift those without transferring, so this subset was the
/// cleaner check while the second set was held out.
fn fresh2_distinct_report(setting: Setting, ranker: Ranker) -> crate::intents::Report {
    let earlier: Vec<Intent> = intents().into_iter().chain(fresh_intents()).collect();
    distinct_report(&fresh2_intents(), &earlier, setting, ranker)
}

/// The third fresh set without its near copies of the three earlier sets' intents (its texts
/// were rephrased against them before the first measurement, so this is nearly all of it).
fn fresh3_distinct_report(setting: Setting, ranker: Ranker) -> crate::intents::Report {
    let earlier: Vec<Intent> = intents().into_iter().chain(fresh_intents()).chain(fresh2_intents()).collect();
    distinct_report(&fresh3_intents(), &earlier, setting, ranker)
}

/// The targets are top-3 >= 90% (one catalog) and >= 85% (all 16). Whole main set 95.9% /
/// 93.5%, its held-out split 95.4% / 92.6%. The fresh sets, one catalog / all 16, each at its
/// first measurement and now: the fourth 75.1% / 65.5% -> 91.4% / 82.2%, the fifth 70.5% / 52.5%
/// -> 85.5% / 70.5%, the sixth 85.5% / 72.0% -> 92.5% / 85.5%, the seventh 72.0% / 60.0% -> 87.5% /
/// 75.5%, the eighth 86.0% / 78.5% -> 90.5% / 86.5%, the ninth 76.5% / 65.5% -> 87.0% / 79.5%, the
/// tenth 73.5% / 59.0% -> 86.5% / 75.5%, the eleventh 59.5% / 48.5% -> 80.0% / 66.5%, the twelfth
/// 66.0% / 51.5% -> 78.5% / 67.0%, the thirteenth 61.5% / 52.5% -> 68.0% / 57.5%, the fourteenth
/// 87.0% / 79.0% -> 89.0% / 81.0% (all tuning sources now); the fifteenth, in natural wording and
/// never tuned on, 84.0% / 78.0%. This test holds these levels so they cannot silently regress,
/// and the engine must beat the word-overlap baseline. On failure it prints misses of the tuning
/// split only.
#[test]
fn intent_set_holds_its_level_and_beats_word_overlap() {
    let one = report(Setting::OneCatalog, Ranker::Engine, |_| true);
    let all = report(Setting::All16, Ranker::Engine, |_| true);
    let baseline = report(Setting::All16, Ranker::Overlap, |_| true);
    let show = |r: &crate::intents::Report| {
        r.misses.iter().filter(|m| !crate::intents::is_holdout(&m.1)).take(40).cloned().collect::<Vec<_>>()
    };
    assert!(
        one.all.top3_rate() >= 0.960,
        "one catalog top-3 {:.3}; misses {:#?}",
        one.all.top3_rate(),
        show(&one)
    );
    assert!(
        all.all.top3_rate() >= 0.937,
        "all 16 top-3 {:.3}; misses {:#?}",
        all.all.top3_rate(),
        show(&all)
    );
    assert!(
        all.all.top3 > baseline.all.top3,
        "engine {} vs word overlap {}",
        all.all.top3,
        baseline.all.top3
    );
    // All 16 loaded, the search scoped to the intent's server (`API.search(query, { server })`).
    let scoped = report(Setting::All16Scoped, Ranker::Engine, |_| true);
    assert!(scoped.all.top3_rate() >= 0.956, "scoped top-3 {:.3}", scoped.all.top3_rate());
    // The held-out split and the fresh check sets (their misses are not printed here).
    let one = report(Setting::OneCatalog, Ranker::Engine, Intent::holdout);
    let all = report(Setting::All16, Ranker::Engine, Intent::holdout);
    let scoped = report(Setting::All16Scoped, Ranker::Engine, Intent::holdout);
    assert!(one.all.top3_rate() >= 0.954, "held-out one catalog top-3 {:.3}", one.all.top3_rate());
    assert!(all.all.top3_rate() >= 0.937, "held-out all 16 top-3 {:.3}", all.all.top3_rate());
    assert!(scoped.all.top3_rate() >= 0.948, "held-out scoped top-3 {:.3}", scoped.all.top3_rate());
    // Each check set: its levels, one catalog / all 16, and (where asked) the engine beating word
    // overlap with all 16 loaded.
    let check = |name: &str, one_min: f64, all_min: f64, beats_overlap: bool| {
        let set = |setting, ranker| fresh_report(name, setting, ranker).expect("a fresh set");
        let one = set(Setting::OneCatalog, Ranker::Engine);
        let all = set(Setting::All16, Ranker::Engine);
        assert!(one.all.top3_rate() >= one_min, "{name} one catalog top-3 {:.3}", one.all.top3_rate());
        assert!(all.all.top3_rate() >= all_min, "{name} all 16 top-3 {:.3}", all.all.top3_rate());
        if beats_overlap {
            let baseline = set(Setting::All16, Ranker::Overlap);
            assert!(
                all.all.top3 > baseline.all.top3,
                "{name}: engine {} vs word overlap {}",
                all.all.top3,
                baseline.all.top3
            );
        }
    };
    check("fresh", 0.951, 0.944, true);
    check("fresh2", 0.941, 0.883, true);
    check("fresh2-distinct", 0.967, 0.924, false);
    check("fresh3", 0.911, 0.864, true);
    check("fresh3-distinct", 0.910, 0.863, false);
    check("fresh4", 0.923, 0.852, true);
    check("fresh5", 0.870, 0.765, true);
    check("fresh6", 0.940, 0.880, true);
    check("fresh7", 0.890, 0.830, true);
    check("fresh8", 0.930, 0.900, true);
    check("fresh9", 0.875, 0.820, true);
    check("fresh10", 0.875, 0.785, true);
    check("fresh11", 0.820, 0.690, true);
    check("fresh12", 0.815, 0.735, true);
    check("fresh13", 0.720, 0.635, true);
    check("fresh14", 0.900, 0.835, true);
    check("fresh15", 0.910, 0.875, true);
    check("fresh16", 0.840, 0.795, true);
    check("fresh17", 0.850, 0.760, true);
    check("fresh18", 0.800, 0.710, true);
}

/// Prints the tables (`-- --nocapture`); `SEARCH_SPLIT=tune|holdout` restricts to one split of
/// the main set, `SEARCH_SPLIT=fresh`, `fresh2`, `fresh2-distinct`, `fresh3`, `fresh3-distinct` or
/// `fresh4` to `fresh18` runs a fresh check set instead; `SEARCH_MISSES=1` prints the misses of the
/// tuning sources only: the main set's tuning split and every fresh set but the last (each became
/// a tuning source when a later set was written). The held-out split and the last fresh set are
/// never looked at while tuning.
#[test]
fn intent_report() {
    let split = std::env::var("SEARCH_SPLIT").unwrap_or_default();
    let keep = |i: &Intent| match split.as_str() {
        "tune" => !i.holdout(),
        "holdout" => i.holdout(),
        _ => true,
    };
    for (title, setting, ranker) in [
        ("one catalog loaded", Setting::OneCatalog, Ranker::Engine),
        ("all 16 loaded", Setting::All16, Ranker::Engine),
        ("all 16 loaded, the search scoped to the intent's server", Setting::All16Scoped, Ranker::Engine),
        ("word overlap, one catalog", Setting::OneCatalog, Ranker::Overlap),
        ("word overlap, all 16", Setting::All16, Ranker::Overlap),
    ] {
        let r = fresh_report(&split, setting, ranker).unwrap_or_else(|| report(setting, ranker, keep));
        println!("{}", r.table(title));
        // Every fresh set but the last written is a tuning source.
        let blind = FRESH_SETS[FRESH_SETS.len() - 1].0;
        let tuning_source = |query: &str| match split.as_str() {
            "holdout" => false,
            fresh if fresh.starts_with("fresh") => fresh != blind,
            _ => !crate::intents::is_holdout(query),
        };
        if std::env::var_os("SEARCH_MISSES").is_some() && ranker == Ranker::Engine {
            for (catalog, query, top, rank) in r.misses.iter().filter(|m| tuning_source(&m.1)) {
                let rank = rank.map_or_else(|| ">10".to_owned(), |r| r.to_string());
                println!("  miss [{catalog}] {query:?} (rank {rank}) -> {top:?}");
            }
        }
    }
}

#[test]
fn vocabulary_groups_are_general() {
    // Not tied to one tool: each group's words occur in the tool text of at least two public
    // catalogs, or of at least two tools.
    let mut text_of: Vec<(String, HashSet<String>)> = Vec::new();
    let mut tool_texts: Vec<HashSet<String>> = Vec::new();
    for c in crate::support::catalog_names() {
        let mut words = HashSet::new();
        for t in crate::support::raw_tools(&c) {
            let text = format!(
                "{} {} {}",
                t["name"].as_str().unwrap_or_default(),
                t.get("title").and_then(|v| v.as_str()).unwrap_or_default(),
                t.get("description").and_then(|v| v.as_str()).unwrap_or_default()
            );
            let terms = content_terms(&text);
            words.extend(terms.iter().cloned());
            tool_texts.push(terms);
        }
        text_of.push((c, words));
    }
    let groups = vocabulary();
    assert!(groups.len() >= 40, "{} groups", groups.len());
    for group in groups {
        // A shorthand stands for one word or more, and a question form may ask for one word.
        let alias = matches!(group.kind, codemode_catalog::search::GroupKind::Alias(_));
        let ask = matches!(group.kind, codemode_catalog::search::GroupKind::Ask(_));
        assert!(
            group.words.len() >= 2 || ((alias || ask) && !group.words.is_empty()),
            "{group:?} has one word"
        );
        let terms: HashSet<String> = group.words.iter().flat_map(|w| content_terms(w)).collect();
        if alias && terms.is_empty() {
            // A shorthand of a filler word (`pls` -> please) only drops out of the query.
            continue;
        }
        let catalogs: Vec<&str> =
            text_of.iter().filter(|(_, words)| !words.is_disjoint(&terms)).map(|(c, _)| c.as_str()).collect();
        let tools = tool_texts.iter().filter(|words| !words.is_disjoint(&terms)).count();
        assert!(
            catalogs.len() >= 2 || tools >= 2,
            "group {:?} is tied to one place: {tools} tools in {catalogs:?}",
            group.words
        );
    }
}

#[test]
fn no_synonym_is_lost_to_a_phrase() {
    // A word that is a phrase's form is indexed as the phrase: as a synonym it would match
    // nothing, unless the phrase's term is the word itself (`event hub` is held as `eventhub`).
    use codemode_catalog::search::{GroupKind, stem, vocabulary};
    let mut forms: HashMap<String, String> = HashMap::new();
    for group in vocabulary().iter().filter(|g| g.kind == GroupKind::Phrase) {
        let canonical: String = group.words[0].split_whitespace().map(stem).collect();
        for form in &group.words[1..] {
            if !form.contains(' ') {
                forms.insert(stem(form), canonical.clone());
            }
        }
    }
    for group in vocabulary().iter().filter(|g| g.kind == GroupKind::Synonyms) {
        for w in &group.words {
            let term = stem(w);
            if let Some(canonical) = forms.get(&term) {
                assert_eq!(
                    &term, canonical,
                    "synonym {w:?} of {:?} is a form of the phrase {canonical:?}",
                    group.words
                );
            }
        }
    }
}

#[test]
fn a_phrase_form_belongs_to_one_concept() {
    // Phrases fold longest first, and of two groups with the same form the first wins: the same
    // form in two groups of different concepts leaves the second one dead.
    use codemode_catalog::search::{GroupKind, vocabulary};
    let mut concept_of: HashMap<&str, &str> = HashMap::new();
    for group in vocabulary().iter().filter(|g| g.kind == GroupKind::Phrase) {
        for form in &group.words {
            let concept = concept_of.entry(form.as_str()).or_insert(group.words[0].as_str());
            assert_eq!(*concept, group.words[0], "{form:?} is a form of two concepts");
        }
    }
}

#[test]
fn synonym_groups_meet_only_through_a_shared_word() {
    // Two synonym groups may share a word (polysemy: `alert` is a notification and a finding),
    // but never only by stemming alike: a stem collision (`savings` -> `save`) would silently
    // join unrelated groups (cost ~ remember).
    use codemode_catalog::search::GroupKind;
    let groups: Vec<&Vec<String>> =
        vocabulary().iter().filter(|g| g.kind == GroupKind::Synonyms).map(|g| &g.words).collect();
    let mut collisions = Vec::new();
    for (i, a) in groups.iter().enumerate() {
        for b in &groups[i + 1..] {
            for wa in a.iter() {
                for wb in b.iter() {
                    if wa != wb && stem(wa) == stem(wb) && !a.contains(wb) && !b.contains(wa) {
                        collisions.push(format!("{wa} ~ {wb}"));
                    }
                }
            }
        }
    }
    // Accepted: forms of one word whose groups are meant to meet (measured: separating them
    // lowers the tuning split). `savings` (-> save, joining cost and remember) and `finding`
    // (-> find, joining search and alert) were such collisions and are gone.
    let accepted = ["document ~ documentation", "follower ~ follow", "subscriber ~ subscribe", "doc ~ docs"];
    collisions.retain(|c| !accepted.contains(&c.as_str()));
    assert!(collisions.is_empty(), "words of different groups stem alike: {collisions:?}");
}

/// `SEARCH_DEBUG="catalog|query;catalog|query"` prints the top 5 hits with their match text.
#[test]
fn search_debug() {
    let Ok(spec) = std::env::var("SEARCH_DEBUG") else { return };
    for item in spec.split(';') {
        let (catalog, query) = item.split_once('|').unwrap_or(("", item));
        let tools = if catalog.is_empty() {
            crate::support::public_plugin_tools()
        } else {
            crate::support::load(catalog, ToolOrigin::BundledPlugin, catalog)
        };
        let c = Catalog::build(tools, &CatalogOptions::default());
        println!("{query:?}");
        for hit in c.search_hits(query, 5) {
            println!("  {:.3} {} [{}]", hit.score, hit.entry.id, hit.matched);
        }
    }
}

/// A made-up catalog in plain English words.
fn kitchen() -> Catalog {
    let tool = |name: &str, description: &str| {
        ToolSpec::new(name, ToolOrigin::BundledPlugin, "kitchen").description(description)
    };
    Catalog::build(
        vec![
            tool("bake_bread", "Bake bread in the oven"),
            tool("boil_water", "Heat water on the stove"),
            tool("scrub_pot", "Scrub a pot clean"),
        ],
        &CatalogOptions::default(),
    )
}

#[test]
fn a_word_the_catalog_lacks_finds_its_wordnet_relative() {
    // `kettle` is nowhere in the catalog; its first sense's hypernym in WordNet is `pot`.
    let relatives: Vec<&str> = codemode_catalog::search::wordnet_relatives(&stem("kettle")).collect();
    assert!(relatives.contains(&stem("pot").as_str()), "kettle's relatives: {relatives:?}");
    let catalog = kitchen();
    let hits = catalog.search_hits("kettle", 3);
    assert_eq!(hits[0].entry.id, "openclaw:kitchen:scrub_pot");
    assert!(hits[0].score > 0.0 && hits[0].matched.contains("kettle~"), "{:?}", hits[0]);
    // The others matched nothing: they are the nearest-name fill.
    assert!(hits[1..].iter().all(|h| h.score == 0.0), "{hits:?}");
    // A query of a word WordNet does not know finds nothing beyond the fill.
    assert!(catalog.search_hits("zzkettle", 3).iter().all(|h| h.score == 0.0));
}

#[test]
fn a_matched_word_is_never_expanded_through_wordnet() {
    // `bake`'s WordNet relatives include `heat`, which is in the catalog (boil_water); `bake`
    // matches its own tool, so it is not expanded and boil_water does not score on it.
    let relatives: Vec<&str> = codemode_catalog::search::wordnet_relatives(&stem("bake")).collect();
    assert!(relatives.contains(&stem("heat").as_str()), "bake's relatives: {relatives:?}");
    let catalog = kitchen();
    let hits = catalog.search_hits("bake", 3);
    assert_eq!(hits[0].entry.id, "openclaw:kitchen:bake_bread");
    assert!(hits[1..].iter().all(|h| h.score == 0.0), "{hits:?}");
}

#[test]
fn the_wordnet_table_parses_and_carries_its_license() {
    let table = codemode_catalog::search::WORDNET_TABLE;
    let header = table.lines().take_while(|l| l.starts_with('#')).collect::<Vec<_>>().join("\n");
    for needle in [
        "WordNet 3.1 Copyright 2011 by Princeton University.  All rights reserved.",
        "Permission to use, copy, modify and distribute this software and",
        "THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON",
        "Princeton University and LICENSEE agrees to preserve same.",
    ] {
        assert!(header.contains(needle), "license header lacks {needle:?}");
    }
    let entries: Vec<&str> = table.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(entries.len(), 51_849);
    assert!(entries.iter().all(|l| l.split(' ').count() >= 2 && !l.contains("  ")));
    // Lemmas that stem alike share one entry.
    assert_eq!(codemode_catalog::search::wordnet_word_count(), 43_426);
}

/// The table the engine reads (pre-stemmed and sorted by the build script) is the source table
/// stemmed: for every head, the stemmed relatives of all lemmas that stem like it, in the source's
/// order, without repeats or the head; and it carries the same license notice.
#[test]
fn the_prestemmed_wordnet_table_is_its_source_stemmed() {
    use codemode_catalog::search::{WORDNET_STEMMED, WORDNET_TABLE, wordnet_relatives};
    let header =
        |t: &str| t.lines().take_while(|l| l.starts_with('#')).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(header(WORDNET_STEMMED), header(WORDNET_TABLE));
    let mut stems: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
    let mut expected: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for line in WORDNET_TABLE.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split(' ');
        let head = stems.entry(words.next().unwrap()).or_insert_with_key(|w| stem(w)).clone();
        let list = expected.entry(head.clone()).or_default();
        for word in words {
            let term = stems.entry(word).or_insert_with_key(|w| stem(w)).clone();
            if term != head && !list.contains(&term) {
                list.push(term);
            }
        }
    }
    let heads: Vec<&str> = WORDNET_STEMMED
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert!(heads.windows(2).all(|w| w[0] < w[1]), "heads are sorted and distinct");
    assert_eq!(heads.len(), expected.len());
    for (head, list) in &expected {
        let got: Vec<&str> = wordnet_relatives(head).collect();
        assert_eq!(got, list.iter().map(String::as_str).collect::<Vec<_>>(), "relatives of {head:?}");
    }
    // Words around and outside the table's range find nothing.
    for missing in ["", "a", "zzzzzz", "aaaaaa", "kettl e"] {
        assert_eq!(wordnet_relatives(missing).count(), 0, "{missing:?}");
    }
}

/// A big server (a wiki and tracker of 30 tools) and a one-tool server that fetches web pages.
/// Some of the big server's tools mention a word of a web ask in passing (a comment's text, an
/// attachment's link).
fn big_and_small() -> Catalog {
    let mut tools: Vec<ToolSpec> = Vec::new();
    let extra = |thing: &str| match thing {
        "comment" => " and its text",
        "attachment" => " and its download link",
        "page" => " and its body text",
        _ => "",
    };
    for thing in
        ["page", "space", "issue", "comment", "label", "attachment", "sprint", "board", "version", "user"]
    {
        for verb in ["get", "create", "update"] {
            tools.push(
                ToolSpec::new(format!("wiki_{verb}_{thing}"), ToolOrigin::BundledPlugin, "wiki")
                    .description(format!("{verb} a wiki {thing}{}.", extra(thing))),
            );
        }
    }
    tools.push(
        ToolSpec::new("fetch", ToolOrigin::BundledPlugin, "fetch")
            .description("Fetches a URL from the internet and extracts its contents as markdown"),
    );
    Catalog::build(tools, &CatalogOptions::default())
}

#[test]
fn a_one_tool_server_is_not_crowded_out_by_chance_matches_in_a_big_one() {
    let catalog = big_and_small();
    // The wiki's `get` tools match `get` in their names and `text` in their summaries; the fetch
    // tool matches as closely but is one of one. A big server's best match is the best of many
    // (its entries weigh `(size / mean)^-0.2`), so the web ask goes to the web server. (`link` is
    // also a relation between things, so it says less of the web than `url` or `webpage`.)
    for query in ["get the text of a url", "get the text of a webpage"] {
        let hits = catalog.search_hits(query, 3);
        assert_eq!(hits[0].entry.id, "openclaw:fetch:fetch", "{query:?}: {hits:?}");
    }
    // The big server still wins what it matches better: the size weight is a tie breaker
    // between near matches, not a penalty that hides its tools.
    assert_eq!(
        ids(&catalog.search("get the download link of a wiki attachment", 1)),
        ["openclaw:wiki:wiki_get_attachment"]
    );
    assert_eq!(ids(&catalog.search("update a wiki sprint", 1)), ["openclaw:wiki:wiki_update_sprint"]);
}

/// A wildcard pattern (`*.md`, `src/**/*.rs`) names the files it matches: a query of little
/// else finds the tool that searches by pattern first.
#[test]
fn a_wildcard_pattern_asks_for_the_tool_that_matches_patterns() {
    let tools = crate::support::load("filesystem", ToolOrigin::BundledPlugin, "filesystem");
    let c = Catalog::build(tools, &CatalogOptions::default());
    for query in ["the *.md under docs", "src/**/*.rs"] {
        let hits = c.search_hits(query, 3);
        assert_eq!(hits[0].entry.name, "search_files", "{query:?}: {:?}", hits[0].entry.id);
        assert!(hits[0].matched.contains("asks: pattern"), "{query:?}: {}", hits[0].matched);
    }
}

/// A query that opens with context takes its action from the clause that opens with a verb, and
/// a phrasal verb split there joins (`throw it away` -> `throw away`, a delete).
#[test]
fn the_verb_of_a_later_clause_sets_the_action() {
    let tools = crate::support::load("atlassian", ToolOrigin::BundledPlugin, "atlassian");
    let c = Catalog::build(tools, &CatalogOptions::default());
    let hits = c.search_hits("that runbook page is outdated, throw it away", 3);
    assert_eq!(hits[0].entry.name, "confluence_delete_page", "{:?}", hits[0].entry.id);
    assert!(hits[0].matched.contains("throw away"), "{}", hits[0].matched);
}

#[test]
fn a_word_every_tool_of_a_server_uses_weighs_less_in_that_server() {
    // `sync` is in every tool of `mirror`, where it picks none of them, and in one tool of
    // `calendar` (not in its name), where it is what that tool does: with both servers loaded, that
    // tool comes before most of mirror's (fourth of four when the word weighs the same in both).
    let catalog = Catalog::build(
        vec![
            owned_tool("mirror", "push_changes", "Sync: push local changes to the remote mirror"),
            owned_tool("mirror", "pull_changes", "Sync: pull remote changes into the local mirror"),
            owned_tool("mirror", "mirror_status", "Sync: show how far the mirror is behind"),
            owned_tool("calendar", "refresh_calendar", "Sync the calendar with the remote account"),
            owned_tool("calendar", "list_events", "List the events of a day"),
            owned_tool("calendar", "delete_event", "Delete an event"),
        ],
        &CatalogOptions::default(),
    );
    let hits = catalog.search_hits("sync", 3);
    let at = hits.iter().position(|h| h.entry.id == "openclaw:calendar:refresh_calendar");
    assert!(at.is_some_and(|at| at <= 1), "{hits:#?}");
}

#[test]
fn auxiliary_verbs_match_nothing() {
    // The public `fetch` server's one tool addresses the model in prose built with auxiliaries
    // ("you did not have internet access"); questions built with them are about other tools, and
    // with all 16 public catalogs loaded that prose ranked `fetch` first.
    let tools: Vec<ToolSpec> = crate::support::catalog_names()
        .iter()
        .flat_map(|c| crate::support::load(c, ToolOrigin::BundledPlugin, c))
        .collect();
    let catalog = Catalog::build(tools, &CatalogOptions::default());
    for (query, wanted) in [
        ("what did the page request from the server?", Some("network_requests")),
        ("what errors did the page log?", None),
        ("did the builds pass on pull 17", None),
    ] {
        let hits = catalog.search_hits(query, 3);
        assert!(wanted.is_none_or(|w| hits[0].entry.name.contains(w)), "{query:?}: {hits:#?}");
        assert!(hits.iter().all(|h| h.entry.name != "fetch"), "{query:?}: {hits:#?}");
    }
    // A preposition that only relates the ask's words matches nothing (WordNet relates
    // `regarding` to the memory server's `relations`).
    let memory = crate::support::small_catalog(&[
        ("memory", "create_relations", "Create relations between entities"),
        ("memory", "search_nodes", "Search the nodes of the knowledge graph"),
    ]);
    let hits = memory.search_hits("regarding Kubernetes", 2);
    assert!(hits.iter().all(|h| !h.matched.contains("regarding")), "{hits:#?}");
}
