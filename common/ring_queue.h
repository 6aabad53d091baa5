// RingQueue: a FIFO in one circular array that grows by doubling and never shrinks by itself.
// std::deque frees a block each time the front passes one and allocates one each time the back
// needs one, so a queue that fills and drains all day (a pipeline's replies, a connection's
// waiters) allocates all day; this one allocates only when it outgrows its largest size so far.
//
// Elements move when the array grows: hold indexes or pointers to elements kept elsewhere, not
// references into the queue across a push_back(). T must be default-constructible and movable;
// pop_front() leaves a default T in the freed slot, so nothing it owned lingers.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace shardctl::common {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  RingQueue(RingQueue&& other) noexcept
      : slots_(std::move(other.slots_)),
        head_(std::exchange(other.head_, 0)),
        size_(std::exchange(other.size_, 0)) {}
  RingQueue& operator=(RingQueue&& other) noexcept {
    if (this == &other) return *this;
    slots_ = std::move(other.slots_);
    head_ = std::exchange(other.head_, 0);
    size_ = std::exchange(other.size_, 0);
    other.slots_.clear();
    return *this;
  }
  RingQueue(const RingQueue&) = delete;
  RingQueue& operator=(const RingQueue&) = delete;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The element `i` places behind the front (0 is the front).
  T& operator[](size_t i) { return slots_[(head_ + i) & mask()]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & mask()]; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  T& push_back(T value) {
    if (size_ == slots_.size()) Grow();
    T& slot = slots_[(head_ + size_) & mask()];
    slot = std::move(value);
    ++size_;
    return slot;
  }
  void pop_front() {
    slots_[head_] = T{};
    head_ = (head_ + 1) & mask();
    --size_;
  }
  // Empties the queue; the array stays for reuse.
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }
  // Empties the queue and frees the array.
  void Release() {
    std::vector<T>().swap(slots_);
    head_ = size_ = 0;
  }
  size_t capacity() const { return slots_.size(); }

 private:
  static constexpr size_t kFirstCapacity = 8;  // a power of two, as every capacity after it

  size_t mask() const { return slots_.size() - 1; }
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? kFirstCapacity : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace shardctl::common
