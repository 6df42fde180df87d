// An Exhibit: what a model's latest request leaves for a front end to draw
// beyond the trace's fields — a curve of many points, a timeline of many
// requests, a map of a KV pool. Trace fields are what lessons check; an
// exhibit is the same run in full, for panels.
//
// A model hands out its exhibit as an immutable object (Model::exhibit); a
// panel draws the concrete type it knows and ignores any other, so no front
// end branches on the model's kind:
//
//     if (auto* e = dynamic_cast<const serving::ServingExhibit*>(state.exhibit.get())) draw(*e);
#pragma once

namespace sixstep {

struct Exhibit {
    virtual ~Exhibit() = default;
};

}  // namespace sixstep
