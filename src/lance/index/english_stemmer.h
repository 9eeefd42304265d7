// The English (Porter2) stemmer of Snowball 3 (algorithms/english.sbl of
// snowballstem/snowball), the revision pylance 14's full-text tokenizer
// applies: the R1 prefixes past/univers/later/emerg/organ beside
// gener/commun/arsen (and inter, as pylance stems "internal" to itself), 'ogist' in step 2, proceed/exceed/succeed and
// dying/lying/inning... inside step 1b, no undoubling of add/ebb/odd.
// Debian's libstemmer is Snowball 2.2, which stems ~1 word in 3000
// differently ("added" -> "ad", "university" -> "univers"), so the algorithm
// is written here and tested word for word against pylance's tokenizer.
#pragma once

#include <string>
#include <string_view>

namespace lance::index {

/// The stem of one token (UTF-8; characters other than a-z, ' and y/Y are
/// consonants to the algorithm, as in Snowball's UTF-8 build).
std::string StemEnglish(std::string_view word);

}  // namespace lance::index
