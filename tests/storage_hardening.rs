//! What an independent attempt to break the storage found (issue 13): links where the storage
//! expects its own directory, directory modes, paths with `..`, a dangling link as storageDir, a
//! directory of another user. And (issue 25) the directories held by descriptor: `rum/` or
//! `pending/` swapped for a link or another directory between writes of a live storage.

mod storage_support;

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::registry::{self, AttachError};
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{FlushOutcome, RealFs, Storage, StorageOptions, PENDING_DIR, RUM_DIR};
use storage_support::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn config_for(dir: &Path) -> Config {
    Config { application_id: "app".into(), ..small_config(dir) }
}

fn attach_error(config: Config) -> String {
    match registry::attach(config) {
        Ok(_) => panic!("attach succeeded"),
        Err(AttachError::Dir(m) | AttachError::Storage(m) | AttachError::Conflict(m)) => m,
    }
}

#[test]
fn a_rum_directory_that_is_a_link_is_refused_and_its_target_left_alone() {
    let (dir, clock) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    let stale = format!("batch-{T0}-0.ndjson");
    fs::write(elsewhere.path().join(&stale), lines_of(0..2)).unwrap();
    symlink(elsewhere.path(), dir.path().join(RUM_DIR)).unwrap();

    let err = Storage::open(&small_config(dir.path()), options(&clock)).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert!(elsewhere.path().join(&stale).exists(), "the link's target is not touched");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 1, "nothing written there");

    // Through the registry (the constructor's path), the message names the problem as well.
    let err = attach_error(config_for(dir.path()));
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn a_rum_directory_of_another_user_is_refused_and_left_alone() {
    let (dir, clock) = setup();
    let root = dir.path().join(RUM_DIR);
    fs::create_dir(&root).unwrap();
    let stale = format!("batch-{T0}-0.ndjson");
    fs::write(root.join(&stale), lines_of(0..2)).unwrap();
    let owner = fs::metadata(&root).unwrap().uid();
    // The file system seam expects another user than the directory's owner (whoever runs the
    // tests), as a directory of another user looks to the real one.
    let other = owner.wrapping_add(1);
    let options = StorageOptions { fs: Arc::new(RealFs::owned_by(other)), ..options(&clock) };

    let err = Storage::open(&small_config(dir.path()), options).unwrap_err().to_string();
    assert!(err.contains(&root.display().to_string()), "{err}");
    assert!(err.contains(&format!("owned by uid {owner}")) && err.contains(&format!("(uid {other})")), "{err}");
    let names: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [stale.as_str()], "nothing written, renamed or removed there");
    assert_eq!(fs::read(root.join(&stale)).unwrap(), lines_of(0..2));
}

#[test]
fn a_rum_directory_replaced_by_a_link_while_open_is_not_followed() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 10);
    storage.flush(TIMEOUT);
    let root = dir.path().join(RUM_DIR);
    let elsewhere = tempfile::tempdir().unwrap();
    let planted = format!("batch-{T0}-0.ndjson");
    fs::remove_dir_all(&root).unwrap();
    symlink(elsewhere.path(), &root).unwrap();
    fs::write(elsewhere.path().join(&planted), lines_of(0..2)).unwrap();

    write_actions(&storage.sink(), 3..6, 10);
    storage.flush(TIMEOUT);
    assert!(storage.next_batch().unwrap_or(None).is_none(), "no batch is read through the link");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 1, "nothing written through the link");
    assert!(elsewhere.path().join(&planted).exists());
}

#[test]
fn every_directory_the_pipeline_creates_is_owner_only() {
    let (dir, _clock) = setup();
    let storage_dir = dir.path().join("a").join("b");
    let shared = registry::attach(config_for(&storage_dir)).unwrap();
    for d in [dir.path().join("a"), storage_dir.clone(), storage_dir.join(RUM_DIR)] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    // Removed under the writer and created again: owner-only again.
    let root = storage_dir.join(RUM_DIR);
    fs::remove_dir_all(&root).unwrap();
    let sink = shared.storage.sink();
    write_actions(&sink, 0..2, 10);
    shared.storage.flush(TIMEOUT);
    assert_eq!(mode(&root), 0o700);
}

#[test]
fn a_dot_dot_segment_does_not_create_the_directory_before_it() {
    let (dir, _clock) = setup();
    let spelled = dir.path().join("x").join("..").join("s");
    let shared = registry::attach(config_for(&spelled)).unwrap();
    assert!(!dir.path().join("x").exists(), "x was created on the way");
    assert_eq!(shared.config.storage_dir, dir.path().join("s").canonicalize().unwrap());
}

#[test]
fn a_dangling_link_as_storage_dir_says_so() {
    let (dir, _clock) = setup();
    let link = dir.path().join("link");
    symlink(dir.path().join("nowhere"), &link).unwrap();
    let err = attach_error(config_for(&link));
    assert!(err.contains("symbolic link") && err.contains("does not exist"), "{err}");
    assert!(!err.contains("File exists"), "{err}");
}

#[test]
fn a_storage_dir_that_is_a_file_says_so() {
    let (dir, _clock) = setup();
    let file = dir.path().join("f");
    fs::write(&file, b"").unwrap();
    let err = attach_error(config_for(&file.join("sub")));
    assert!(err.contains("is not a directory"), "{err}");
}

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

/// Writes actions `seqs` one at a time, each appended to the active batch before the next is
/// sent (the batch is not sealed).
fn write_one_by_one(storage: &Storage, seqs: std::ops::Range<u64>) {
    let sink = storage.sink();
    for seq in seqs {
        let before = storage.counters().documents_written.get();
        sink.write(action(seq, 10)).unwrap();
        wait_until("the document written", || storage.counters().documents_written.get() > before);
    }
}

/// Writes actions `seqs` into the pre-consent buffer one at a time, each flushed (written out)
/// before the next is sent.
fn buffer_one_by_one(storage: &Storage, seqs: std::ops::Range<u64>) {
    let sink = storage.sink();
    for seq in seqs {
        sink.write(action(seq, 10)).unwrap();
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    }
}

/// A storage with a sealed batch (0..3) and an active one (3..5) written, then `rum/` renamed
/// away and `replace` run on its path; then 5..8 written. Returns where `rum/` went.
fn swap_rum_between_writes(replace: impl FnOnce(&Path)) -> (tempfile::TempDir, Storage, std::path::PathBuf) {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    write_one_by_one(&storage, 3..5);
    let root = dir.path().join(RUM_DIR);
    let moved = dir.path().join("rum-moved");
    fs::rename(&root, &moved).unwrap();
    replace(&root);
    write_one_by_one(&storage, 5..8);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "no write failed");
    (dir, storage, moved)
}

#[test]
fn rum_swapped_for_a_link_between_writes_the_writes_stay_in_the_directory_held_open() {
    let elsewhere = tempfile::tempdir().unwrap();
    let (_dir, storage, moved) = swap_rum_between_writes(|root| symlink(elsewhere.path(), root).unwrap());
    assert!(names(elsewhere.path()).is_empty(), "nothing written through the link: {:?}", names(elsewhere.path()));
    assert_eq!(seqs_on_disk(&moved), (0..8).collect::<Vec<_>>(), "all in the directory checked at open");
    assert_eq!(uploaded_seqs(&storage), (0..8).collect::<Vec<_>>(), "read and claimed there too");
    assert!(names(elsewhere.path()).is_empty());
    assert_eq!(storage.counters().write_errors.get(), 0);
}

#[test]
fn rum_swapped_for_another_directory_between_writes_the_new_one_is_not_touched() {
    let (dir, storage, moved) = swap_rum_between_writes(|root| fs::create_dir(root).unwrap());
    let root = dir.path().join(RUM_DIR);
    assert!(names(&root).is_empty(), "nothing written into the directory put in place: {:?}", names(&root));
    assert_eq!(seqs_on_disk(&moved), (0..8).collect::<Vec<_>>());
    assert_eq!(uploaded_seqs(&storage), (0..8).collect::<Vec<_>>());
    assert!(names(&root).is_empty());
}

/// `rum/` removed and made again between writes (a new, empty directory of the same user), with
/// no batch open at the time: the writer goes on in the new one, and the sealed batch that went
/// with the old one is counted lost at once, not when an upload first misses it.
#[test]
fn rum_removed_and_made_again_between_writes_what_went_with_it_is_counted_lost_at_once() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let root = dir.path().join(RUM_DIR);
    fs::remove_dir_all(&root).unwrap();
    fs::create_dir(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o700)).unwrap();
    write_actions(&storage.sink(), 3..6, 10);
    storage.flush(TIMEOUT);
    let c = storage.counters();
    assert_eq!(seqs_on_disk(&root), (3..6).collect::<Vec<_>>());
    assert_eq!(c.events_on_disk.get(), 3, "the gauge counts what is on disk");
    assert_eq!(c.lost_events_external.get(), 3, "the sealed batch");
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn rum_removed_and_replaced_by_a_link_the_writes_are_refused_and_nothing_lands_there() {
    // The link's target even holds a `pending/` of the process's user: a check of `rum/pending`
    // by path would go through the link and accept it.
    let (dir, clock) = setup();
    let config = with_consent(small_config(dir.path()), TrackingConsent::Pending);
    let storage = open(&config, &clock);
    buffer_one_by_one(&storage, 0..3);
    let root = dir.path().join(RUM_DIR);
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir(elsewhere.path().join(PENDING_DIR)).unwrap();
    fs::remove_dir_all(&root).unwrap();
    symlink(elsewhere.path(), &root).unwrap();

    let sink = storage.sink();
    write_actions(&sink, 3..6, 10);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    sink.consent_changed(TrackingConsent::Granted).unwrap();
    write_actions(&sink, 6..9, 10);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert_eq!(names(elsewhere.path()), [PENDING_DIR], "nothing written through the link");
    let planted = elsewhere.path().join(PENDING_DIR);
    assert!(names(&planted).is_empty(), "nothing written through the link: {:?}", names(&planted));
    assert!(storage.counters().write_errors.get() >= 1);
    assert!(storage.next_batch().unwrap_or(None).is_none());
}

#[test]
fn pending_swapped_for_a_link_between_writes_the_writes_stay_in_the_directory_held_open() {
    let (dir, clock) = setup();
    let storage = open(&with_consent(small_config(dir.path()), TrackingConsent::Pending), &clock);
    buffer_one_by_one(&storage, 0..3);
    let pending = dir.path().join(RUM_DIR).join(PENDING_DIR);
    let moved = dir.path().join(RUM_DIR).join("pending-moved");
    let elsewhere = tempfile::tempdir().unwrap();
    fs::rename(&pending, &moved).unwrap();
    symlink(elsewhere.path(), &pending).unwrap();

    buffer_one_by_one(&storage, 3..6);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert!(names(elsewhere.path()).is_empty(), "nothing written through the link");
    let held: Vec<u64> = names(&moved).iter().flat_map(|n| seqs_in(&fs::read(moved.join(n)).unwrap())).collect();
    assert_eq!(held, (0..6).collect::<Vec<_>>(), "the buffer stays in the directory checked");
    // Granted: the buffer moves into batches from there, still not through the link.
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(uploaded_seqs(&storage), (0..6).collect::<Vec<_>>());
    assert!(names(elsewhere.path()).is_empty());
    assert_eq!(storage.counters().write_errors.get(), 0);
}

#[test]
fn the_directories_are_opened_once_not_per_write() {
    for consent in [TrackingConsent::Granted, TrackingConsent::Pending] {
        let (dir, clock) = setup();
        let real = RealFs::new();
        let options = StorageOptions { fs: Arc::new(real.clone()), ..options(&clock) };
        let storage = Storage::open(&with_consent(small_config(dir.path()), consent), options).unwrap();
        let write = if consent == TrackingConsent::Pending { buffer_one_by_one } else { write_one_by_one };
        write(&storage, 0..1);
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
        let opened = real.directories_opened();
        assert!(opened <= 4, "{consent:?}: {opened} directory opens at open");
        write(&storage, 1..40);
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
        assert_eq!(real.directories_opened(), opened, "{consent:?}: no directory opened again for 39 writes");

        // Removed: found on the next write, opened (created) again by path, then held again.
        fs::remove_dir_all(storage.directory()).unwrap();
        // (The flush may report the active file lost with the directory.)
        storage.sink().write(action(40, 10)).unwrap();
        storage.flush(TIMEOUT);
        let again = real.directories_opened();
        assert!(again > opened, "{consent:?}");
        write(&storage, 41..60);
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
        assert_eq!(real.directories_opened(), again, "{consent:?}");
        assert_eq!(mode(storage.directory()), 0o700);
    }
}

/// Serialized lines of actions `seqs`, as the writer writes them.
fn lines_of(seqs: std::ops::Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    for i in seqs {
        rum_native::core::storage::json::to_writer(&mut out, &action(i, 10)).unwrap();
        out.push(b'\n');
    }
    out
}
