//! Fresh names in O(1): the set of names a function has (or had: erased
//! instructions keep theirs, so a name is never reused), built on the first
//! request, plus the next suffix to try per base, so asking for `t` a
//! thousand times does not rescan `t1`..`t999`.

use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};

#[derive(Clone, Debug, Default)]
pub struct Names {
    /// `None` until a fresh name is asked for: a parse pays nothing.
    taken: Option<HashSet<String>>,
    /// Per `base` + separator: the smallest suffix that may still be free.
    next: HashMap<String, u64>,
}

impl Names {
    pub(crate) fn is_built(&self) -> bool {
        self.taken.is_some()
    }

    /// Builds the set from `existing` unless built already.
    pub(crate) fn build<'a>(&mut self, existing: impl FnOnce() -> Vec<&'a str>) {
        if self.taken.is_none() {
            self.taken = Some(existing().into_iter().map(str::to_string).collect());
        }
    }

    /// Records `name` as taken (a no-op until the set is built).
    pub(crate) fn note(&mut self, name: &str) {
        if let Some(t) = &mut self.taken {
            if !t.contains(name) {
                t.insert(name.to_string());
            }
        }
    }

    /// Takes `name`; false if it was taken already. Needs the set built.
    pub(crate) fn reserve(&mut self, name: &str) -> bool {
        let t = self.taken.as_mut().expect("names are built first");
        if t.contains(name) {
            return false;
        }
        t.insert(name.to_string());
        true
    }

    /// `base` if free, else `base{sep}1`, `base{sep}2`, ...; taken. Needs
    /// the set built.
    pub(crate) fn fresh(&mut self, base: &str, sep: &str) -> String {
        let t = self.taken.as_mut().expect("names are built first");
        // One hash when the base is free, the usual case.
        if t.insert(base.to_string()) {
            return base.to_string();
        }
        let key = format!("{base}{sep}");
        let mut k = self.next.get(&key).copied().unwrap_or(1);
        let mut name = format!("{key}{k}");
        while t.contains(&name) {
            k += 1;
            name = format!("{key}{k}");
        }
        t.insert(name.clone());
        self.next.insert(key, k + 1);
        name
    }
}
