// InlineVector<T, N>: a vector of trivially copyable T that keeps up to N elements inline.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INLINE_VECTOR_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INLINE_VECTOR_H_

#include <cstddef>
#include <type_traits>
#include <vector>

namespace pjrtkit {
namespace plugin_wrapper {

// The per-call arrays of WrappedLoadedExecutable::Execute (argument and output pointer lists,
// events, indices) are small and short-lived; keeping them inline (on the stack) instead of in
// std::vectors saves a heap allocation and free per array per execution. Beyond N elements the
// contents move to a std::vector. Not copyable: data() may point into the object itself.
template <typename T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable<T>::value, "InlineVector holds plain values");

 public:
  // An empty vector.
  InlineVector() = default;
  // `size` elements with indeterminate values, for the caller to write before reading: small
  // arrays are not cleared, since clearing them (rep stos) cost more than filling them.
  explicit InlineVector(size_t size) {
    if (size > N) heap_.resize(size);
    size_ = size;
  }
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;

  // Appends `value`.
  void push_back(T value) {
    if (size_ < N) {
      inline_[size_++] = value;
      return;
    }
    if (size_ == N) heap_.assign(inline_, inline_ + N);
    heap_.push_back(value);
    ++size_;
  }

  // The elements.
  T* data() { return size_ > N ? heap_.data() : inline_; }
  const T* data() const { return size_ > N ? heap_.data() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  T inline_[N];          // The first N elements (all of them while size_ <= N).
  std::vector<T> heap_;  // All elements once size_ > N.
  size_t size_ = 0;      // Number of elements.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INLINE_VECTOR_H_
